import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.compute.optim.Sgd;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A two-thread step of the MNIST MLP (784-512-256-10, ReLU, SGD, batch 64) that sends between the
 * cores only the second layer's partial sums (64 KiB each way) and meets once a step, against one
 * thread, {@code synced} (two threads each training a model of its own, meeting after every step:
 * the host's bound for a step that meets once) and {@code crew} (the step of {@code
 * --compute-threads 2}), alternating in one JVM.
 *
 * <p>{@code paired}: thread t owns hidden units {@code [256t, 256t + 256)} of the first layer, kept
 * transposed ({@code 256 x 784}, so its share is contiguous rows, as the update wants), and the same
 * rows of the second layer's weights. It computes its first-layer activations from the whole batch
 * (each thread copies the batch) and its partial sums of the second layer over its own depth; after
 * the one meeting each thread adds both partial sums (thread 0's first, with the bias, as one
 * thread's depth blocks add) and computes the output layer, the loss and the second layer's output
 * gradient whole, on its own copy of the output layer's weights and the second bias, which both
 * update alike. Its weight gradients and the input gradient of its first-layer units need nothing
 * of the other thread. The partial sums are double-buffered, so a thread never writes the buffer the
 * other may still read.
 *
 * <p>Prints microseconds a step for each, each thread's wait at the meeting, and after each round a
 * cache line's round trip between the two threads (as {@code ReplicaStep.java ping}); at the end, the
 * largest difference between {@code paired}'s weights and one thread's after 100 steps from the same
 * weights. Not part of the build; the tests only compile it.
 *
 * <pre>
 * mvn -q -o install -DskipTests -pl compute
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/PairedStep.java [ROUNDS] [STEPS]
 * </pre>
 */
public class PairedStep {
  static final int BATCH = 64, IN = 784, H1 = 512, H2 = 256, OUT = 10, HALF = H1 / 2;
  static final int[] HIDDEN = {H1, H2};
  static final float LR = 0.05f;
  static final int POOL_ROWS = 4096;
  static final float[] POOL = new float[POOL_ROWS * IN];
  static final int[] POOL_LABELS = new int[POOL_ROWS];

  static int poolRow(long step, int k) {
    return (int) Math.floorMod((step * BATCH + k) * 2654435761L, (long) POOL_ROWS);
  }

  static void read(long step, Tensor x) {
    float[] xs = x.data();
    for (int k = 0; k < BATCH; k++) System.arraycopy(POOL, poolRow(step, k) * IN, xs, k * IN, IN);
  }

  static void columns(long step, Tensor x, int from, int to) {
    float[] xs = x.data();
    for (int k = 0; k < BATCH; k++) System.arraycopy(POOL, poolRow(step, k) * IN + from, xs, k * IN + from, to - from);
  }

  static void labels(long step, int[] labels) {
    for (int k = 0; k < BATCH; k++) labels[k] = POOL_LABELS[poolRow(step, k)];
  }

  /** A model and the project's step on a backend of {@code threads} threads, then SGD as the single process runs it. */
  static final class Trainer {
    final CpuBackend backend;
    final Mlp model;
    final GradientStep gradientStep;
    final Sgd sgd = new Sgd();
    final List<Parameter> params;
    final OptimizerState[] states;
    final Tensor x = Tensor.zeros(BATCH, IN);
    final int[] labels = new int[BATCH];
    long waitNanos;

    Trainer(int threads) {
      backend = CpuBackend.create(threads);
      model = Mlp.create(backend, IN, HIDDEN, OUT, Activation.RELU, 7);
      gradientStep = GradientStep.of(model, BATCH);
      params = model.parameters();
      states = new OptimizerState[params.size()];
      for (int i = 0; i < states.length; i++) states[i] = OptimizerState.create(sgd, params.get(i).size());
    }

    void step(long step) {
      labels(step, labels);
      gradientStep.forwardBackward(x, (from, to) -> columns(step, x, from, to), labels, p -> { });
      for (int i = 0; i < states.length; i++) {
        Parameter p = params.get(i);
        states[i].step(sgd, LR, p.value().data(), p.grad().data(), p.value().cols(), backend::forEachRowSlice);
      }
    }

    void close() {
      gradientStep.close();
      backend.close();
    }
  }

  /** One thread's share of the paired step. */
  static final class Half {
    final int t;
    final CpuBackend be = CpuBackend.create(1);
    final Tensor x = Tensor.zeros(BATCH, IN);
    final int[] labels = new int[BATCH];
    /** Rows [256t, +256) of the first layer's weights transposed: this thread's hidden units by input. */
    final Tensor w1t = Tensor.zeros(HALF, IN), g1t = Tensor.zeros(HALF, IN);
    final Tensor b1 = Tensor.zeros(HALF), gb1 = Tensor.zeros(HALF);
    final Tensor h1 = Tensor.zeros(BATCH, HALF);
    /** Rows [256t, +256) of the second layer's weights. */
    final Tensor w2 = Tensor.zeros(HALF, H2), g2 = Tensor.zeros(HALF, H2);
    final Tensor[] p2 = {Tensor.zeros(BATCH, H2), Tensor.zeros(BATCH, H2)};
    /** This thread's copies of what both compute whole. */
    final Tensor b2 = Tensor.zeros(H2), w3 = Tensor.zeros(H2, OUT), b3 = Tensor.zeros(OUT);
    final Tensor h2 = Tensor.zeros(BATCH, H2), z3 = Tensor.zeros(BATCH, OUT), dz3 = Tensor.zeros(BATCH, OUT);
    final Tensor gw3 = Tensor.zeros(H2, OUT), gb3 = Tensor.zeros(OUT), dz2 = Tensor.zeros(BATCH, H2);
    final Tensor gb2 = Tensor.zeros(H2), dz1 = Tensor.zeros(BATCH, HALF);
    long waitNanos;

    Half(int t, Mlp from) {
      this.t = t;
      List<Parameter> p = from.parameters();
      float[] w1 = p.get(0).value().data();
      for (int j = 0; j < HALF; j++) {
        for (int i = 0; i < IN; i++) w1t.data()[j * IN + i] = w1[i * H1 + t * HALF + j];
      }
      System.arraycopy(p.get(1).value().data(), t * HALF, b1.data(), 0, HALF);
      System.arraycopy(p.get(2).value().data(), t * HALF * H2, w2.data(), 0, HALF * H2);
      System.arraycopy(p.get(3).value().data(), 0, b2.data(), 0, H2);
      System.arraycopy(p.get(4).value().data(), 0, w3.data(), 0, H2 * OUT);
      System.arraycopy(p.get(5).value().data(), 0, b3.data(), 0, OUT);
    }
  }

  static final class Paired {
    final Half[] halves;
    final AtomicInteger arrived = new AtomicInteger();
    final AtomicInteger done = new AtomicInteger();
    final Semaphore start = new Semaphore(0);
    volatile int stepsToRun;
    volatile boolean stopped;
    final Thread worker;

    Paired(Mlp from) {
      halves = new Half[] {new Half(0, from), new Half(1, from)};
      worker = new Thread(this::workerLoop, "paired-1");
      worker.setDaemon(true);
      worker.start();
    }

    double run(int steps) {
      for (Half h : halves) h.waitNanos = 0;
      done.set(0);
      stepsToRun = steps;
      long t = System.nanoTime();
      start.release();
      runSteps(halves[0], steps);
      while (done.get() < 1) Thread.onSpinWait();
      return (System.nanoTime() - t) / 1e3 / steps;
    }

    void workerLoop() {
      while (true) {
        start.acquireUninterruptibly();
        if (stopped) return;
        runSteps(halves[1], stepsToRun);
        done.incrementAndGet();
      }
    }

    void runSteps(Half me, int steps) {
      Half h0 = halves[0], h1 = halves[1];
      CpuBackend be = me.be;
      long meeting = arrived.get() / 2;
      for (int s = 0; s < steps; s++) {
        read(s, me.x);
        labels(s, me.labels);
        rows(me.b1, me.h1);
        be.gemm(false, true, 1f, me.x, me.w1t, 1f, me.h1);
        be.relu(me.h1, me.h1);
        Tensor p = me.p2[s & 1];
        if (me.t == 0) {
          rows(me.b2, p);
          be.gemm(false, false, 1f, me.h1, me.w2, 1f, p);
        } else {
          be.gemm(false, false, 1f, me.h1, me.w2, 0f, p);
        }
        long w = System.nanoTime();
        arrived.incrementAndGet();
        meeting++;
        while (arrived.get() < 2 * meeting) Thread.onSpinWait();
        me.waitNanos += System.nanoTime() - w;
        addRelu(h0.p2[s & 1].data(), h1.p2[s & 1].data(), me.h2.data());
        rows(me.b3, me.z3);
        be.gemm(false, false, 1f, me.h2, me.w3, 1f, me.z3);
        be.softmaxCrossEntropy(me.z3, me.labels, null, me.dz3);
        be.gemm(true, false, 1f, me.h2, me.dz3, 0f, me.gw3);
        be.columnSums(me.dz3, me.gb3);
        be.gemmReluBackward(false, true, 1f, me.dz3, me.w3, 0f, me.dz2, me.h2);
        be.columnSums(me.dz2, me.gb2);
        be.gemm(true, false, 1f, me.h1, me.dz2, 0f, me.g2);
        be.gemmReluBackward(false, true, 1f, me.dz2, me.w2, 0f, me.dz1, me.h1);
        be.gemm(true, false, 1f, me.dz1, me.x, 0f, me.g1t);
        be.columnSums(me.dz1, me.gb1);
        sgd(me.w1t, me.g1t);
        sgd(me.b1, me.gb1);
        sgd(me.w2, me.g2);
        sgd(me.b2, me.gb2);
        sgd(me.w3, me.gw3);
        sgd(me.b3, me.gb3);
      }
    }

    /** The largest difference between these weights and {@code model}'s. */
    double maxDiff(Mlp model) {
      List<Parameter> p = model.parameters();
      float[] w1 = p.get(0).value().data(), b1 = p.get(1).value().data(), w2 = p.get(2).value().data();
      double max = 0;
      for (Half h : halves) {
        for (int j = 0; j < HALF; j++) {
          for (int i = 0; i < IN; i++) {
            max = Math.max(max, Math.abs(h.w1t.data()[j * IN + i] - w1[i * H1 + h.t * HALF + j]));
          }
          max = Math.max(max, Math.abs(h.b1.data()[j] - b1[h.t * HALF + j]));
        }
        for (int i = 0; i < HALF * H2; i++) max = Math.max(max, Math.abs(h.w2.data()[i] - w2[h.t * HALF * H2 + i]));
        max = Math.max(max, diff(h.b2.data(), p.get(3).value().data()));
        max = Math.max(max, diff(h.w3.data(), p.get(4).value().data()));
        max = Math.max(max, diff(h.b3.data(), p.get(5).value().data()));
      }
      return max;
    }

    void stop() {
      stopped = true;
      start.release();
      for (Half h : halves) h.be.close();
    }
  }

  static void rows(Tensor bias, Tensor c) {
    float[] cs = c.data();
    int n = bias.size();
    for (int off = 0; off < cs.length; off += n) System.arraycopy(bias.data(), 0, cs, off, n);
  }

  static void addRelu(float[] a, float[] b, float[] out) {
    for (int i = 0; i < out.length; i++) out[i] = Math.max(a[i] + b[i], 0f);
  }

  static void sgd(Tensor v, Tensor g) {
    float[] vs = v.data(), gs = g.data();
    for (int i = 0; i < vs.length; i++) vs[i] -= LR * gs[i];
  }

  static double diff(float[] a, float[] b) {
    double max = 0;
    for (int i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
    return max;
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
    Random r = new Random(1);
    for (int i = 0; i < POOL.length; i++) POOL[i] = r.nextFloat();
    for (int i = 0; i < POOL_LABELS.length; i++) POOL_LABELS[i] = r.nextInt(10);
    Trainer[] pair = {new Trainer(1), new Trainer(1)};
    Trainer crew = new Trainer(2);
    Paired paired = new Paired(new Trainer(1).model);
    for (int round = 0; round < rounds + 2; round++) {
      double crewUs = timeSteps(crew, steps);
      double oneUs = timeSteps(pair[0], steps);
      double pairedUs = paired.run(steps);
      double syncedUs = synced(pair, steps);
      double oneAfterUs = timeSteps(pair[1], steps);
      double pingNs = pingPong(200_000);
      if (round < 2) continue; // the JIT's
      double one = (oneUs + oneAfterUs) / 2;
      System.out.printf("one %.1f us  synced %.2fx  crew %.1f us (%.2fx)  paired %.1f us (%.2fx; waits %.1f and %.1f us"
              + " a step)  round trip %.0f ns%n", one, 2 * one / syncedUs, crewUs, one / crewUs, pairedUs,
          one / pairedUs, paired.halves[0].waitNanos / 1e3 / steps, paired.halves[1].waitNanos / 1e3 / steps, pingNs);
    }
    paired.stop();
    Trainer reference = new Trainer(1);
    Paired check = new Paired(new Trainer(1).model);
    int checked = 100;
    timeSteps(reference, checked);
    check.run(checked);
    System.out.printf("after %d steps from the same weights: largest |paired - one thread| over the weights %.3g%n",
        checked, check.maxDiff(reference.model));
    check.stop();
    for (Trainer t : pair) t.close();
    crew.close();
    System.exit(0);
  }

  static double timeSteps(Trainer t, int steps) {
    long start = System.nanoTime();
    for (int s = 0; s < steps; s++) t.step(s);
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  static double synced(Trainer[] trainers, int steps) throws InterruptedException {
    AtomicInteger arrived = new AtomicInteger();
    Thread other = new Thread(() -> run(trainers[1], steps, arrived));
    long start = System.nanoTime();
    other.start();
    run(trainers[0], steps, arrived);
    other.join();
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  static void run(Trainer t, int steps, AtomicInteger arrived) {
    for (int s = 0; s < steps; s++) {
      t.step(s);
      arrived.incrementAndGet();
      while (arrived.get() < 2 * (s + 1)) Thread.onSpinWait();
    }
  }

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
