import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One training step of the MNIST MLP (784-512-256-10, ReLU, SGD, batch 64) on two cores, four
 * ways, alternating in one JVM: {@code one} (one thread), {@code split} (each product cut between
 * two threads on its own, as {@code --compute-threads 2} ran before the crew step), {@code crew}
 * (the step run by both threads together, {@code GradientStep.of} on a two-thread backend, the
 * update after it), and {@code owned}: this script's own version of the crew's design, which
 * gives up one thread's bits to cut the output layer and the loss by rows of the batch, copies
 * each thread's input columns on that thread, updates each thread's share of the weights inside
 * the step, and keeps each thread's share of a layer in arrays of its own. {@code owned} runs twice: with each
 * thread reading its input columns, and with thread 0 reading the batch, as a trainer's reader does.
 *
 * <p>{@code owned}: thread t copies the batch's input features {@code [392t, 392t + 392)} and owns
 * those rows of the first layer's weights, columns {@code [256t, 256t + 256)} of the first hidden
 * layer (those rows of the second layer's weights) and rows {@code [32t, 32t + 32)} of the batch
 * from the second hidden layer on. Each layer's forward is a partial product over the depth the
 * thread owns; after a meeting each thread adds its own part of the two partial sums. Thread 0
 * updates the output layer and the second bias.
 *
 * <p>Prints microseconds a step for each (for the first three also forward and backward, and the
 * update after; the rest is the batch's read), and after each round a cache line's round trip between
 * the two threads (as {@code ReplicaStep.java ping}). Checks that {@code owned} trains the same
 * model as one thread: the largest weight difference after 100 steps from the same weights.
 * Not part of the build; the tests only compile it.
 *
 * <pre>
 * mvn -q -o install -DskipTests -pl compute
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/OwnedStep.java [ROUNDS] [STEPS]
 * </pre>
 */
public class OwnedStep {
  static final int BATCH = 64, IN = 784, H1 = 512, H2 = 256, OUT = 10;
  static final int[] HIDDEN = {H1, H2};
  static final float LR = 0.05f;
  static final int POOL_ROWS = 4096;
  static final float[] POOL = new float[POOL_ROWS * IN];
  static final int[] POOL_LABELS = new int[POOL_ROWS];

  static int poolRow(long step, int k) {
    return (int) Math.floorMod((step * BATCH + k) * 2654435761L, (long) POOL_ROWS);
  }

  /** Features {@code [from, to)} of step {@code step}'s batch into {@code x}'s columns from 0. */
  static void read(long step, Tensor x, int from, int to) {
    float[] xs = x.data();
    int cols = x.cols();
    for (int k = 0; k < BATCH; k++) System.arraycopy(POOL, poolRow(step, k) * IN + from, xs, k * cols, to - from);
  }

  static void labels(long step, int first, int[] labels) {
    for (int k = 0; k < labels.length; k++) labels[k] = POOL_LABELS[poolRow(step, first + k)];
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    Random r = new Random(1);
    for (int i = 0; i < POOL.length; i++) POOL[i] = r.nextFloat();
    for (int i = 0; i < POOL_LABELS.length; i++) POOL_LABELS[i] = r.nextInt(10);
    Tensor x = Tensor.zeros(BATCH, IN);
    int[] labels = new int[BATCH];
    CpuBackend oneBackend = CpuBackend.create(1);
    CpuBackend splitBackend = CpuBackend.create(2);
    Mlp one = Mlp.create(oneBackend, IN, HIDDEN, OUT, Activation.RELU, 7);
    Mlp split = Mlp.create(splitBackend, IN, HIDDEN, OUT, Activation.RELU, 7);
    CpuBackend crewBackend = CpuBackend.create(2);
    Mlp crewModel = Mlp.create(crewBackend, IN, HIDDEN, OUT, Activation.RELU, 7);
    GradientStep crew = GradientStep.of(crewModel, BATCH);
    Owned owned = new Owned(Mlp.create(oneBackend, IN, HIDDEN, OUT, Activation.RELU, 7));
    try {
      for (int round = 0; round < rounds + 2; round++) {
        double oneUs = timeSteps(one, x, labels, steps);
        String oneParts = parts();
        double splitUs = timeSteps(split, x, labels, steps);
        String splitParts = parts();
        double crewUs = timeSteps(crewModel, crew, x, labels, steps);
        String crewParts = parts();
        double[] own = owned.run(steps, false);
        double[] callerReads = owned.run(steps, true);
        double pingNs = pingPong(200_000);
        if (round < 2) continue; // the JIT's
        System.out.printf("one %.1f us  split %.1f us (%.2fx)  crew %.1f us (%.2fx)"
                + "  owned %.1f us (%.2fx; thread 0 waits %.1f, thread 1 %.1f)"
                + "  owned, the batch read on thread 0 %.1f us (%.2fx)  round trip %.0f ns%n", oneUs, splitUs,
            oneUs / splitUs, crewUs, oneUs / crewUs, own[0], oneUs / own[0], own[1], own[2], callerReads[0],
            oneUs / callerReads[0], pingNs);
        System.out.printf("    forward and backward, update: one %s  split %s  crew %s%n", oneParts, splitParts,
            crewParts);
      }
      Mlp reference = Mlp.create(oneBackend, IN, HIDDEN, OUT, Activation.RELU, 7);
      Owned check = new Owned(Mlp.create(oneBackend, IN, HIDDEN, OUT, Activation.RELU, 7));
      int checked = 100;
      timeSteps(reference, x, labels, checked);
      check.run(checked, false);
      System.out.printf("after %d steps from the same weights: largest |owned - one thread| over the weights %.3g%n",
          checked, check.maxDiff(reference));
      check.stop();
    } finally {
      owned.stop();
      oneBackend.close();
      splitBackend.close();
      crewBackend.close();
    }
  }

  static double timeSteps(Mlp model, Tensor x, int[] labels, int steps) {
    return timeSteps(model, model, x, labels, steps);
  }

  /** The last {@link #timeSteps} call's microseconds a step in forward and backward, and in the update after. */
  static double stepUs, updateUs;

  /** Steps of {@code step} (the model's own, or another that writes its gradients), each followed by the update. */
  static double timeSteps(Mlp model, GradientStep step, Tensor x, int[] labels, int steps) {
    long start = System.nanoTime();
    long stepNanos = 0, updateNanos = 0;
    for (int i = 0; i < steps; i++) {
      read(i, x, 0, IN);
      labels(i, 0, labels);
      long t0 = System.nanoTime();
      step.forwardBackward(x, labels, p -> { });
      long t1 = System.nanoTime();
      stepNanos += t1 - t0;
      for (Parameter p : model.parameters()) {
        float[] v = p.value().data(), g = p.grad().data();
        int cols = p.value().cols();
        if (v.length > cols) {
          model.backend().forEachRowSlice(v.length / cols, cols, (from, to) -> sgd(v, g, from * cols, to * cols));
        } else {
          sgd(v, g, 0, v.length);
        }
      }
      updateNanos += System.nanoTime() - t1;
    }
    stepUs = stepNanos / 1e3 / steps;
    updateUs = updateNanos / 1e3 / steps;
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  static String parts() {
    return String.format("%.1f + %.1f us", stepUs, updateUs);
  }

  static void sgd(float[] v, float[] g, int from, int to) {
    for (int i = from; i < to; i++) v[i] -= LR * g[i];
  }

  static void sgd(Tensor v, Tensor g) {
    sgd(v.data(), g.data(), 0, v.size());
  }

  /** What one thread of the owned step holds; thread t's. */
  static final class Half {
    final int t;
    final CpuBackend backend = CpuBackend.create(1);
    final Tensor x = Tensor.zeros(BATCH, IN / 2);
    final int[] labels = new int[BATCH / 2];
    /** w1[s]: rows [392t, +392) and columns [256s, +256) of the first layer's weights. */
    final Tensor[] w1 = {Tensor.zeros(IN / 2, H1 / 2), Tensor.zeros(IN / 2, H1 / 2)};
    final Tensor[] g1 = {Tensor.zeros(IN / 2, H1 / 2), Tensor.zeros(IN / 2, H1 / 2)};
    /** p1[s]: this thread's partial sums of columns [256s, +256) of the first hidden layer. */
    final Tensor[] p1 = {Tensor.zeros(BATCH, H1 / 2), Tensor.zeros(BATCH, H1 / 2)};
    final Tensor b1 = Tensor.zeros(H1 / 2), gb1 = Tensor.zeros(H1 / 2);
    final Tensor h1 = Tensor.zeros(BATCH, H1 / 2);
    /** Rows [256t, +256) of the second layer's weights. */
    final Tensor w2 = Tensor.zeros(H1 / 2, H2), g2 = Tensor.zeros(H1 / 2, H2);
    final Tensor p2 = Tensor.zeros(BATCH, H2);
    /** Rows [32t, +32) of the batch from here on. */
    final Tensor h2 = Tensor.zeros(BATCH / 2, H2);
    final Tensor z3 = Tensor.zeros(BATCH / 2, OUT), dz3 = Tensor.zeros(BATCH / 2, OUT);
    final Tensor gw3 = Tensor.zeros(H2, OUT), gb3 = Tensor.zeros(OUT);
    final Tensor dz2 = Tensor.zeros(BATCH / 2, H2);
    final Tensor dz2All = Tensor.zeros(BATCH, H2);
    final Tensor gb2 = Tensor.zeros(H2);
    final Tensor dz1 = Tensor.zeros(BATCH, H1 / 2);
    long waitNanos;

    Half(int t) {
      this.t = t;
    }
  }

  /** Two threads that each own half of every layer for the whole step. */
  static final class Owned {
    final Half[] halves = {new Half(0), new Half(1)};
    final Tensor b2 = Tensor.zeros(H2), w3 = Tensor.zeros(H2, OUT), b3 = Tensor.zeros(OUT);
    final AtomicInteger arrived = new AtomicInteger();
    final AtomicInteger done = new AtomicInteger();
    final Semaphore start = new Semaphore(0);
    volatile int stepsToRun;
    volatile boolean stopped;
    /** Whether thread 0 reads the whole batch at the start of a step, the other waiting, as a trainer's reader does. */
    volatile boolean callerReads;
    final Thread worker;

    /** Starts from {@code model}'s weights, cut into the halves. */
    Owned(Mlp model) {
      List<Parameter> p = model.parameters();
      float[] w1 = p.get(0).value().data(), b1 = p.get(1).value().data(), w2 = p.get(2).value().data();
      for (Half h : halves) {
        for (int s = 0; s < 2; s++) {
          for (int i = 0; i < IN / 2; i++) {
            System.arraycopy(w1, (h.t * IN / 2 + i) * H1 + s * H1 / 2, h.w1[s].data(), i * H1 / 2, H1 / 2);
          }
        }
        System.arraycopy(b1, h.t * H1 / 2, h.b1.data(), 0, H1 / 2);
        System.arraycopy(w2, h.t * H1 / 2 * H2, h.w2.data(), 0, H1 / 2 * H2);
      }
      System.arraycopy(p.get(3).value().data(), 0, b2.data(), 0, H2);
      System.arraycopy(p.get(4).value().data(), 0, w3.data(), 0, H2 * OUT);
      System.arraycopy(p.get(5).value().data(), 0, b3.data(), 0, OUT);
      worker = new Thread(this::workerLoop, "owned-1");
      worker.setDaemon(true);
      worker.start();
    }

    /** Microseconds a step over {@code steps} steps, then each thread's waits a step. */
    double[] run(int steps, boolean callerReads) {
      this.callerReads = callerReads;
      for (Half h : halves) h.waitNanos = 0;
      done.set(0);
      stepsToRun = steps;
      long t = System.nanoTime();
      start.release();
      runSteps(halves[0], steps);
      while (done.get() < 1) Thread.onSpinWait();
      double us = (System.nanoTime() - t) / 1e3 / steps;
      return new double[] {us, halves[0].waitNanos / 1e3 / steps, halves[1].waitNanos / 1e3 / steps};
    }

    void workerLoop() {
      while (true) {
        start.acquireUninterruptibly();
        if (stopped) return;
        runSteps(halves[1], stepsToRun);
        done.incrementAndGet();
      }
    }

    void await(Half me, long k) {
      long t = System.nanoTime();
      arrived.incrementAndGet();
      while (arrived.get() < 2 * k) Thread.onSpinWait();
      me.waitNanos += System.nanoTime() - t;
    }

    void runSteps(Half me, int steps) {
      Half other = halves[1 - me.t];
      Half h0 = halves[0], h1 = halves[1];
      CpuBackend be = me.backend;
      int t = me.t;
      long barrier = arrived.get() / 2;
      for (int s = 0; s < steps; s++) {
        if (!callerReads) {
          read(s, me.x, t * IN / 2, (t + 1) * IN / 2);
        } else {
          if (t == 0) {
            read(s, h0.x, 0, IN / 2);
            read(s, h1.x, IN / 2, IN);
          }
          await(me, ++barrier);
        }
        labels(s, t * BATCH / 2, me.labels);
        be.gemm(false, false, 1f, me.x, me.w1[0], 0f, me.p1[0]);
        be.gemm(false, false, 1f, me.x, me.w1[1], 0f, me.p1[1]);
        await(me, ++barrier);
        // Columns [256t, +256) of the first hidden layer: thread 0's partial, thread 1's, the bias.
        addRelu(h0.p1[t].data(), 0, h1.p1[t].data(), 0, me.b1.data(), me.h1.data(), BATCH, H1 / 2);
        be.gemm(false, false, 1f, me.h1, me.w2, 0f, me.p2);
        await(me, ++barrier);
        addRelu(h0.p2.data(), t * BATCH / 2 * H2, h1.p2.data(), t * BATCH / 2 * H2, b2.data(), me.h2.data(),
            BATCH / 2, H2);
        for (int i = 0; i < BATCH / 2; i++) System.arraycopy(b3.data(), 0, me.z3.data(), i * OUT, OUT);
        be.gemm(false, false, 1f, me.h2, w3, 1f, me.z3);
        be.softmaxCrossEntropy(me.z3, me.labels, null, me.dz3);
        be.scale(0.5f, me.dz3); // the mean over the whole batch of 64
        be.gemm(true, false, 1f, me.h2, me.dz3, 0f, me.gw3);
        be.columnSums(me.dz3, me.gb3);
        be.gemmReluBackward(false, true, 1f, me.dz3, w3, 0f, me.dz2, me.h2);
        await(me, ++barrier);
        System.arraycopy(h0.dz2.data(), 0, me.dz2All.data(), 0, BATCH / 2 * H2);
        System.arraycopy(h1.dz2.data(), 0, me.dz2All.data(), BATCH / 2 * H2, BATCH / 2 * H2);
        be.gemm(true, false, 1f, me.h1, me.dz2All, 0f, me.g2);
        be.gemmReluBackward(false, true, 1f, me.dz2All, me.w2, 0f, me.dz1, me.h1);
        sgd(me.w2, me.g2);
        if (t == 0) {
          be.columnSums(me.dz2All, me.gb2);
          sgd(b2, me.gb2);
          float[] w = w3.data(), a = h0.gw3.data(), b = h1.gw3.data();
          for (int i = 0; i < w.length; i++) w[i] -= LR * (a[i] + b[i]);
          float[] bb = b3.data(), ga = h0.gb3.data(), gb = h1.gb3.data();
          for (int i = 0; i < bb.length; i++) bb[i] -= LR * (ga[i] + gb[i]);
        }
        await(me, ++barrier);
        be.gemm(true, false, 1f, me.x, h0.dz1, 0f, me.g1[0]);
        be.gemm(true, false, 1f, me.x, h1.dz1, 0f, me.g1[1]);
        be.columnSums(me.dz1, me.gb1);
        sgd(me.b1, me.gb1);
        sgd(me.w1[0], me.g1[0]);
        sgd(me.w1[1], me.g1[1]);
      }
    }

    /** {@code out = max(a + b + bias, 0)} over {@code rows x cols}, a and b from their offsets. */
    static void addRelu(float[] a, int aOff, float[] b, int bOff, float[] bias, float[] out, int rows, int cols) {
      for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
          int k = i * cols + j;
          out[k] = Math.max(a[aOff + k] + b[bOff + k] + bias[j], 0f);
        }
      }
    }

    double maxDiff(Mlp model) {
      List<Parameter> p = model.parameters();
      float[] w1 = p.get(0).value().data(), b1 = p.get(1).value().data(), w2 = p.get(2).value().data();
      double max = 0;
      for (Half h : halves) {
        for (int s = 0; s < 2; s++) {
          float[] mine = h.w1[s].data();
          for (int i = 0; i < IN / 2; i++) {
            for (int j = 0; j < H1 / 2; j++) {
              max = Math.max(max, Math.abs(mine[i * H1 / 2 + j] - w1[(h.t * IN / 2 + i) * H1 + s * H1 / 2 + j]));
            }
          }
        }
        for (int j = 0; j < H1 / 2; j++) max = Math.max(max, Math.abs(h.b1.data()[j] - b1[h.t * H1 / 2 + j]));
        float[] mine = h.w2.data();
        for (int i = 0; i < mine.length; i++) max = Math.max(max, Math.abs(mine[i] - w2[h.t * H1 / 2 * H2 + i]));
      }
      max = Math.max(max, diff(b2.data(), p.get(3).value().data()));
      max = Math.max(max, diff(w3.data(), p.get(4).value().data()));
      return Math.max(max, diff(b3.data(), p.get(5).value().data()));
    }

    static double diff(float[] a, float[] b) {
      double max = 0;
      for (int i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
      return max;
    }

    void stop() {
      stopped = true;
      start.release();
      for (Half h : halves) h.backend.close();
    }
  }

  /** Nanoseconds for one round trip of a value between this thread and another (as ReplicaStep's). */
  static double pingPong(int trips) throws InterruptedException {
    AtomicInteger ball = new AtomicInteger();
    Thread other = new Thread(() -> {
      for (int i = 0; i < trips; i++) {
        while (ball.get() != 2 * i + 1) Thread.onSpinWait();
        ball.set(2 * i + 2);
      }
    });
    other.start();
    long start = System.nanoTime();
    for (int i = 0; i < trips; i++) {
      ball.set(2 * i + 1);
      while (ball.get() != 2 * i + 2) Thread.onSpinWait();
    }
    long ns = System.nanoTime() - start;
    other.join();
    return (double) ns / trips;
  }
}
