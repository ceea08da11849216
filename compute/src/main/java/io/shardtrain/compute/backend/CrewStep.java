package io.shardtrain.compute.backend;

import io.shardtrain.compute.ColumnFill;
import io.shardtrain.compute.Tensor;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One training step of a stack of dense layers with the rectifier after each hidden one and
 * softmax cross-entropy on top, run by all of a {@link CpuBackend}'s threads together from the
 * first product to the last gradient, each thread keeping its share of every layer for the whole
 * step. Gradients are written, the weights only read: the optimizer runs after, as for any step.
 *
 * <p>Thread t owns the rows of each hidden layer's weights that {@link VectorGemm#forEachRowSlice}
 * gives it (whole depth blocks, {@link DepthBlocks#start}): it computes its depth blocks of the
 * layer's forward product, and those rows of the weight gradient and columns of the input
 * gradient. The threads meet once after each hidden layer's forward, where thread t adds up, in
 * block order, the columns of the output that are its rows of the next layer (each thread all of
 * the last hidden layer's), and once after each input gradient but the last layer's, to gather the
 * gradient's columns. The output layer and the loss are small: every thread computes them whole,
 * from its own copy of the last hidden layer, so that none waits for another's; thread 0 writes
 * their gradients.
 *
 * <p>The same bits as one thread (and as the products cut one at a time): each sum runs over the
 * same depth blocks in the same order, and the output layer and the loss make the calls one thread
 * makes. What it saves over cutting each product on its own: a hand-off and a wait per product, the
 * caller's passes between them while the other threads idle, and most of what crossed between
 * cores, since each thread reads its own partial sums, activations and gates. On two vCPUs that
 * share no cache it runs the MNIST MLP's step at about 1.5x one thread, where the products cut one
 * at a time gave about 1.4x in the same minutes (docs/BENCHMARKS.md, session 42).
 *
 * <p>{@link #takes} says for which batch sizes: those for which every hidden layer's forward is cut
 * by depth ({@link VectorGemm#cutByDepth}). Not thread-safe: one step at a time, as a model's.
 *
 * <p>A step profile ({@link #timePhases}) adds up, for each thread, the time of each {@link Phase}
 * in the steps it times.
 */
public final class CrewStep {
  /** What a thread of a timed step spends its time on ({@link #phaseTimes}). */
  public enum Phase {
    /** From the step's call to the thread's start: the hand-off (none on the caller's thread, 0). */
    START,
    /** Copying the batch's columns the thread reads, where the step was given them to copy ({@link ColumnFill}). */
    READ,
    /** The hidden layers' forward products, the thread's depth blocks. */
    FORWARD,
    /** Adding up the partial products in block order, and the rectifier. */
    SUMS,
    /** The output layer and the loss, whole; on thread 0 also their gradients. */
    OUTPUT,
    /** The hidden layers' weight and bias gradients, the thread's rows and columns of them. */
    WEIGHT_GRADIENTS,
    /** The hidden layers' input gradients but the first's, the thread's columns, and the rectifier's gates. */
    INPUT_GRADIENTS,
    /** Gathering the input gradient's columns from every thread. */
    GATHER,
    /** Waiting at the meetings for the other threads. */
    MEETINGS
  }

  /**
   * {@code steps} timed steps took {@code stepNanos} on the caller, from the call to the last
   * thread's end; {@code nanos[t][p]} is thread t's time in phase {@code Phase.values()[p]}.
   * {@code stalls[t]} of thread t's waits ({@link Phase#START} and {@link Phase#MEETINGS}) took
   * {@link #STALL_NANOS} or more, {@code stallNanos[t]} in all: waits for a thread that was not
   * running, which an uneven share of the work does not explain.
   */
  public record PhaseTimes(long steps, long stepNanos, long[][] nanos, long[] stalls, long[] stallNanos) {
    /** Thread {@code t}'s time in {@code phase}, summed over the steps. */
    public long nanos(int t, Phase phase) {
      return nanos[t][phase.ordinal()];
    }
  }

  /**
   * A wait this long is a stall: a step's work is split to within tens of µs between the threads,
   * while a thread the host or another thread took the core from waits a scheduler's time slice.
   */
  public static final long STALL_NANOS = 500_000L;

  private static final Phase[] PHASES = Phase.values();
  /** Where a thread's stall count and stall time sit among its times, after its phases'. */
  private static final int STALLS = PHASES.length, STALL_TIME = PHASES.length + 1;
  /**
   * Longs between two threads' phase times: 128 bytes, so that no cache line holds two threads'
   * counts, which would cross between cores at every phase's end.
   */
  private static final int TIMES_STRIDE = 16;
  private final VectorGemm gemm;
  private final GemmCrew crew;
  private final int threads;
  private final int[] widths;
  /** Dense layers, the output layer included. */
  private final int layers;
  private final Meetings meetings;
  private Member[] members;
  /** Each thread's part of a step, handed to the crew. */
  private Runnable[] slices;
  private int batch;

  // This step's operands, set before the crew starts and read by every thread.
  private Tensor x;
  private ColumnFill fill;
  private int[] labels;
  private Tensor[] weights, biases, weightGrads, biasGrads;
  private Thread caller;
  private float loss;
  /** Null until {@link #timePhases}: thread t's phase times from {@code t * TIMES_STRIDE}, then its stalls. */
  private long[] times;
  /** Whether the steps from now on are timed ({@link #timePhases}). */
  private boolean timing;
  /** {@link #times} while the step now running is timed, else null: what its threads add to. */
  private long[] live;
  /** When the timed step now running was called, for each thread's {@link Phase#START}. */
  private volatile long stepStart;
  private long timedSteps, timedNanos;

  CrewStep(VectorGemm gemm, int[] widths) {
    this.gemm = gemm;
    this.crew = gemm.crew();
    this.threads = gemm.threads();
    this.widths = widths.clone();
    this.layers = widths.length - 1;
    this.meetings = new Meetings(threads);
  }

  /**
   * Whether a step of {@code batch} rows runs here: every hidden layer's forward product is cut by
   * depth on this backend, so each thread has whole depth blocks of it.
   */
  public boolean takes(int batch) {
    if (batch < 1) return false;
    for (int l = 0; l + 1 < layers; l++) {
      if (!gemm.cutByDepth(batch, widths[l + 1], widths[l])) return false;
    }
    return true;
  }

  /**
   * Times each thread's phases in the steps from now on ({@code on}; a clock read at each phase's
   * end) or leaves them untimed; what earlier timed steps added stays ({@link #phaseTimes}).
   */
  public void timePhases(boolean on) {
    if (on && times == null) times = new long[threads * TIMES_STRIDE];
    timing = on;
  }

  /** The phase times of the steps timed so far ({@link #timePhases}); null when never timed. */
  public PhaseTimes phaseTimes() {
    long[] t = times;
    if (t == null) return null;
    long[][] nanos = new long[threads][];
    long[] stalls = new long[threads], stallNanos = new long[threads];
    for (int i = 0; i < threads; i++) {
      nanos[i] = Arrays.copyOfRange(t, i * TIMES_STRIDE, i * TIMES_STRIDE + PHASES.length);
      stalls[i] = t[i * TIMES_STRIDE + STALLS];
      stallNanos[i] = t[i * TIMES_STRIDE + STALL_TIME];
    }
    return new PhaseTimes(timedSteps, timedNanos, nanos, stalls, stallNanos);
  }

  /** The mean loss of the last step that ran. */
  public float loss() {
    return loss;
  }

  /**
   * Forward, loss and backward on {@code x} ({@code batch x widths[0]}) and {@code labels}, reading
   * each layer's weight and bias and writing their gradients; false, with nothing to rely on
   * written, when the backend's threads are busy with another caller's work (the caller then runs
   * the step another way). Where {@code fill} is not null, each thread first copies into {@code x}
   * the columns it reads (its rows of the first layer's weights): none of the batch then crosses
   * between cores. Requires {@link #takes}{@code (x.rows())}.
   */
  public boolean step(Tensor x, ColumnFill fill, int[] labels, Tensor[] weights, Tensor[] biases,
      Tensor[] weightGrads, Tensor[] biasGrads) {
    int b = x.rows();
    if (!takes(b)) throw new IllegalArgumentException("a crew step does not take a batch of " + b + " rows");
    if (labels.length != b) {
      throw new IllegalArgumentException("labels: " + labels.length + " for a batch of " + b + " rows");
    }
    if (members == null || batch != b) allocate(b);
    this.x = x;
    this.fill = fill;
    this.labels = labels;
    this.weights = weights;
    this.biases = biases;
    this.weightGrads = weightGrads;
    this.biasGrads = biasGrads;
    this.caller = Thread.currentThread();
    meetings.reset();
    live = timing ? times : null;
    long start = 0;
    if (live != null) {
      start = System.nanoTime();
      stepStart = start;
    }
    try {
      crew.run(slices);
      boolean ran = !meetings.broken();
      if (ran && live != null) {
        timedSteps++;
        timedNanos += System.nanoTime() - start;
      }
      return ran;
    } finally {
      this.x = null;
      this.fill = null;
      this.weights = this.biases = this.weightGrads = this.biasGrads = null;
    }
  }

  private void allocate(int b) {
    batch = b;
    members = new Member[threads];
    slices = new Runnable[threads];
    for (int t = 0; t < threads; t++) {
      Member m = new Member(t, b);
      members[t] = m;
      slices[t] = () -> run(m);
    }
  }

  /** Where thread {@code t}'s rows of hidden layer {@code l}'s weights start; thread t + 1's start ends them. */
  private int rowStart(int l, int t) {
    return DepthBlocks.start(widths[l], t, threads);
  }

  private void run(Member me) {
    me.met = 0;
    if (me.t > 0 && Thread.currentThread() == caller) {
      // The crew had no free thread for this part: with one thread short the others would wait forever.
      meetings.breakAll();
      return;
    }
    long[] t = live;
    if (t != null) {
      long now = System.nanoTime();
      me.mark = now;
      if (me.t > 0) add(t, me.t, Phase.START, now - stepStart);
    }
    try {
      if (fill != null) {
        fill.columns(rowStart(0, me.t), rowStart(0, me.t + 1));
        lap(me, Phase.READ);
      }
      if (forward(me)) backward(me);
    } catch (Throwable e) {
      meetings.breakAll();
      throw e;
    }
  }

  /** Adds the time since the thread's last lap to {@code phase}, when timed. */
  private void lap(Member me, Phase phase) {
    long[] t = live;
    if (t == null) return;
    long now = System.nanoTime();
    add(t, me.t, phase, now - me.mark);
    me.mark = now;
  }

  private static void add(long[] times, int t, Phase phase, long nanos) {
    int at = t * TIMES_STRIDE;
    times[at + phase.ordinal()] += nanos;
    if (nanos >= STALL_NANOS && (phase == Phase.START || phase == Phase.MEETINGS)) {
      times[at + STALLS]++;
      times[at + STALL_TIME] += nanos;
    }
  }

  /** The hidden layers' forward, then the output layer and the loss; false when the meetings broke. */
  private boolean forward(Member me) {
    GemmWorkspace ws = VectorGemm.threadWorkspace();
    int t = me.t, b = batch;
    for (int l = 0; l + 1 < layers; l++) {
      int in = widths[l], out = widths[l + 1];
      int from = rowStart(l, t), to = rowStart(l, t + 1), block = DepthBlocks.block(in);
      float[] a = l == 0 ? x.data() : me.hidden[l - 1];
      int aOff = l == 0 ? from : 0, lda = l == 0 ? in : to - from;
      float[] w = weights[l].data();
      if (t == 0) {
        float[] first = me.partials[l];
        float[] bias = biases[l].data();
        Merges.biasRows(bias, out, b, first, 0, out);
        VectorGemm.blocked(ws, false, false, b, out, to - from, block, 1f, a, aOff, lda, w, from * out, out, 1f, first,
            0, out);
      } else {
        for (int pc = from, j = 0; pc < to; pc += block, j++) {
          VectorGemm.blocked(ws, false, false, b, out, Math.min(block, to - pc), block, 1f, a, aOff + pc - from, lda,
              w, pc * out, out, 0f, me.partials[l], j * b * out, out);
        }
      }
      lap(me, Phase.FORWARD);
      if (!meetings.await(++me.met)) return false;
      lap(me, Phase.MEETINGS);
      if (l + 2 < layers) {
        int c0 = rowStart(l + 1, t), c1 = rowStart(l + 1, t + 1);
        sum(l, c0, c1, me.hidden[l], c1 - c0);
      } else {
        sum(l, 0, out, me.last.data(), out);
      }
      lap(me, Phase.SUMS);
    }
    int o = layers - 1, classes = widths[layers];
    Merges.biasRows(biases[o].data(), classes, b, me.logits.data(), 0, classes);
    CpuBackend single = me.single;
    single.gemm(false, false, 1f, me.last, weights[o], 1f, me.logits);
    float mean = single.softmaxCrossEntropy(me.logits, labels, null, me.logitGrad);
    if (me.t == 0) {
      loss = mean;
      single.gemm(true, false, 1f, me.last, me.logitGrad, 0f, weightGrads[o]);
      single.columnSums(me.logitGrad, biasGrads[o]);
    }
    single.gemmReluBackward(false, true, 1f, me.logitGrad, weights[o], 0f, me.lastGrad, me.last);
    lap(me, Phase.OUTPUT);
    return true;
  }

  /** The hidden layers' backward, last first. */
  private void backward(Member me) {
    GemmWorkspace ws = VectorGemm.threadWorkspace();
    int t = me.t, b = batch;
    float[] g = me.lastGrad.data();
    for (int l = layers - 2; l >= 0; l--) {
      int in = widths[l], out = widths[l + 1];
      int from = rowStart(l, t), to = rowStart(l, t + 1);
      float[] a = l == 0 ? x.data() : me.hidden[l - 1];
      int aOff = l == 0 ? from : 0, lda = l == 0 ? in : to - from;
      VectorGemm.product(ws, true, false, to - from, out, b, VectorGemm.depthBlock(in, b), 1f, a, aOff, lda, g, 0, out,
          0f, weightGrads[l].data(), from * out, out);
      int c0 = (int) ((long) out * t / threads), c1 = (int) ((long) out * (t + 1) / threads);
      CpuBackend.columnSums(g, b, out, c0, c1, biasGrads[l].data());
      lap(me, Phase.WEIGHT_GRADIENTS);
      if (l == 0) break;
      float[] own = me.hiddenGrad[l - 1];
      VectorGemm.product(ws, false, true, b, to - from, out, VectorGemm.depthBlock(b, out), 1f, g, 0, out,
          weights[l].data(), from * out, out, 0f, own, 0, to - from);
      me.gates[l - 1].apply(own, to - from, 0, b, 0, to - from);
      lap(me, Phase.INPUT_GRADIENTS);
      if (!meetings.await(++me.met)) return;
      lap(me, Phase.MEETINGS);
      // The input gradient's columns, each thread's block in its place: the next layer down's dZ.
      float[] all = me.gathered[l - 1];
      for (Member other : members) {
        int s0 = rowStart(l, other.t), s1 = rowStart(l, other.t + 1), w = s1 - s0;
        float[] block = other.hiddenGrad[l - 1];
        for (int i = 0; i < b; i++) System.arraycopy(block, i * w, all, i * in + s0, w);
      }
      g = all;
      lap(me, Phase.GATHER);
    }
  }

  /**
   * Columns [c0, c1) of hidden layer {@code l}'s output, rectified, into {@code dst} (row stride
   * {@code ld}, column c0 at 0): thread 0's partial sums, which start from the bias, then every other
   * thread's depth blocks in order, as one thread adds its blocks.
   */
  private void sum(int l, int c0, int c1, float[] dst, int ld) {
    int out = widths[l + 1], b = batch, size = b * out;
    float[] first = members[0].partials[l];
    for (int i = 0; i < b; i++) {
      int row = i * out, d = i * ld;
      System.arraycopy(first, row + c0, dst, d, c1 - c0);
      for (int s = 1; s < threads; s++) {
        float[] scratch = members[s].partials[l];
        int blocks = scratch.length / size;
        for (int j = 0; j < blocks; j++) {
          VectorGemm.add(dst, d, scratch, j * size + row + c0, dst, d, c1 - c0);
        }
      }
    }
    Rectifier.FORWARD.apply(dst, ld, 0, b, 0, c1 - c0);
  }

  /** What thread {@code t} writes in a step, sized for a batch of {@code b}. */
  private final class Member {
    final int t;
    /** Meetings this thread has reached in this step. */
    int met;
    /** When the thread's current phase began, in a timed step. */
    long mark;
    /**
     * Per hidden layer: thread 0's partial sums (b x out, from the bias); another thread's depth
     * blocks' products, one b x out matrix after another.
     */
    final float[][] partials;
    /** Per hidden layer but the last: this thread's columns of its output (its rows of the next layer). */
    final float[][] hidden;
    /** The same layers' output gradient, this thread's columns, gated. */
    final float[][] hiddenGrad;
    /** The rectifier's gate of each of those layers' input gradients: this thread's columns of its output. */
    final Rectifier[] gates;
    /** The same layers' output gradient, all columns, gathered from every thread's. */
    final float[][] gathered;
    /** This thread's copy of the last hidden layer's output, and its gradient through the rectifier. */
    final Tensor last, lastGrad;
    final Tensor logits, logitGrad;
    /**
     * The output layer and the loss, whole, with the calls a one-thread backend makes; one per thread,
     * so that none shares the backend's record of its last caller's workspace.
     */
    final CpuBackend single = CpuBackend.create(1);

    Member(int t, int b) {
      this.t = t;
      int hiddenLayers = layers - 1;
      partials = new float[hiddenLayers][];
      hidden = new float[hiddenLayers][];
      hiddenGrad = new float[hiddenLayers][];
      gates = new Rectifier[hiddenLayers];
      gathered = new float[hiddenLayers][];
      for (int l = 0; l < hiddenLayers; l++) {
        int in = widths[l], out = widths[l + 1];
        int from = rowStart(l, t), to = rowStart(l, t + 1);
        int blocks = t == 0 ? 1 : (to - from + DepthBlocks.block(in) - 1) / DepthBlocks.block(in);
        partials[l] = new float[blocks * b * out];
        if (l + 2 < layers) {
          int cols = rowStart(l + 1, t + 1) - rowStart(l + 1, t);
          hidden[l] = new float[b * cols];
          hiddenGrad[l] = new float[b * cols];
          gates[l] = Rectifier.gatedBy(hidden[l]);
          gathered[l] = new float[b * out];
        }
      }
      last = Tensor.zeros(b, widths[layers - 1]);
      lastGrad = Tensor.zeros(b, widths[layers - 1]);
      logits = Tensor.zeros(b, widths[layers]);
      logitGrad = Tensor.zeros(b, widths[layers]);
    }
  }

  /** Where the threads meet in a step: a spinning count, which a thread that cannot go on breaks for all. */
  private static final class Meetings {
    private final int parties;
    private final AtomicInteger arrived = new AtomicInteger();
    private volatile boolean broken;

    Meetings(int parties) {
      this.parties = parties;
    }

    void reset() {
      arrived.set(0);
      broken = false;
    }

    boolean broken() {
      return broken;
    }

    void breakAll() {
      broken = true;
    }

    /** Meeting {@code k} (1, 2, ... in a step); false when broken. */
    boolean await(int k) {
      arrived.incrementAndGet();
      long start = System.nanoTime();
      int spins = 0;
      while (arrived.get() < parties * k) {
        if (broken) return false;
        // A thread descheduled for long: stop burning the core it needs.
        if (++spins < 1024 || System.nanoTime() - start < GemmCrew.SPIN_NANOS) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      }
      return !broken;
    }
  }
}
