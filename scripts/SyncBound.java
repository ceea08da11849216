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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What this host lets any two-thread step of the MNIST MLP (784-512-256-10, ReLU, SGD, batch 64)
 * give over one thread, whatever the step's design: two threads each train a model of their own
 * (nothing shared, nothing crossing between the cores) a whole one-thread step at a time, so each
 * does exactly one step's work per step's worth of time, and
 * <ul>
 *   <li>{@code free}: never wait for each other (the machine's throughput for independent work);
 *   <li>{@code synced}: meet after every step of theirs, as any synchronous step must at least once
 *       (its update needs the whole batch's gradient), where a real two-thread step meets at least
 *       once per half of this work;
 * </ul>
 * against {@code one}: the same step on one thread while the other vCPU idles, and {@code crew}: the
 * step of {@code --compute-threads 2} (the crew step, each thread copying the batch's columns it
 * reads, then the update in the threads' row slices, as {@code local} runs it), alternating in one
 * JVM. Two threads' steps a second over one thread's: {@code free} bounds what the cores give,
 * {@code synced} what they give a step that waits for its slower half (vCPUs at different speeds,
 * and a vCPU the host takes away for a while stops both): no design with a meeting a step, however
 * little it sends between the cores, does better on the same host in the same minutes; {@code crew}
 * is what the project's step gets of it.
 * Each step copies its batch's 64 rows, drawn from 4096 random rows, into the model's input first.
 * After each round, a cache line's round trip between the two threads (as {@code ReplicaStep.java ping}).
 * Not part of the build; the tests only compile it.
 *
 * <pre>
 * mvn -q -o install -DskipTests -pl compute
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/SyncBound.java [ROUNDS] [STEPS]
 * </pre>
 */
public class SyncBound {
  static final int BATCH = 64, IN = 784, OUT = 10;
  static final int[] HIDDEN = {512, 256};
  static final float LR = 0.05f;
  static final int POOL_ROWS = 4096;
  static final float[] POOL = new float[POOL_ROWS * IN];
  static final int[] POOL_LABELS = new int[POOL_ROWS];

  /**
   * A model and its step on a backend of {@code threads} threads, run as the single process runs it:
   * the labels read on the caller, the features copied by the step (with two threads, by each crew
   * thread the columns it reads), then SGD in the row slices of the threads that computed them.
   */
  static final class Trainer {
    final CpuBackend backend;
    final Mlp model;
    final GradientStep gradientStep;
    final Sgd sgd = new Sgd();
    final List<Parameter> params;
    final OptimizerState[] states;
    final Tensor x = Tensor.zeros(BATCH, IN);
    final int[] labels = new int[BATCH];
    /** Nanoseconds this trainer waited at the meetings in the last run. */
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

  static int poolRow(long step, int k) {
    return (int) Math.floorMod((step * BATCH + k) * 2654435761L, (long) POOL_ROWS);
  }

  /** Columns {@code [from, to)} of step {@code step}'s batch into {@code x}. */
  static void columns(long step, Tensor x, int from, int to) {
    float[] xs = x.data();
    for (int k = 0; k < BATCH; k++) System.arraycopy(POOL, poolRow(step, k) * IN + from, xs, k * IN + from, to - from);
  }

  static void labels(long step, int[] labels) {
    for (int k = 0; k < BATCH; k++) labels[k] = POOL_LABELS[poolRow(step, k)];
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
    Random r = new Random(1);
    for (int i = 0; i < POOL.length; i++) POOL[i] = r.nextFloat();
    for (int i = 0; i < POOL_LABELS.length; i++) POOL_LABELS[i] = r.nextInt(10);
    Trainer[] trainers = {new Trainer(1), new Trainer(1)};
    Trainer crew = new Trainer(2);
    for (int round = 0; round < rounds + 2; round++) {
      double crewUs = timeSteps(crew, steps);
      double oneUs = timeSteps(trainers[0], steps);
      double freeUs = two(trainers, steps, false);
      double syncedUs = two(trainers, steps, true);
      long w0 = trainers[0].waitNanos / steps / 1000, w1 = trainers[1].waitNanos / steps / 1000;
      double oneAfterUs = timeSteps(trainers[1], steps);
      double pingNs = pingPong(200_000);
      if (round < 2) continue; // the JIT's
      double one = (oneUs + oneAfterUs) / 2;
      // Two threads do two steps in the time a step of theirs takes.
      System.out.printf("one %.1f us a step (%.1f, %.1f)  free %.1f us (%.2fx)  synced %.1f us (%.2fx; waits a"
              + " step %d and %d us)  crew %.1f us (%.2fx)  round trip %.0f ns%n", one, oneUs, oneAfterUs, freeUs,
          2 * one / freeUs, syncedUs, 2 * one / syncedUs, w0, w1, crewUs, one / crewUs, pingNs);
    }
    for (Trainer t : trainers) t.close();
    crew.close();
  }

  /** Microseconds a step of {@code t}'s, {@code steps} of them called from this thread alone. */
  static double timeSteps(Trainer t, int steps) {
    long start = System.nanoTime();
    for (int s = 0; s < steps; s++) t.step(s);
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  /** Microseconds per step of each thread, both running {@code steps} steps, meeting after each when {@code synced}. */
  static double two(Trainer[] trainers, int steps, boolean synced) throws InterruptedException {
    AtomicInteger arrived = new AtomicInteger();
    for (Trainer t : trainers) t.waitNanos = 0;
    Thread other = new Thread(() -> run(trainers[1], steps, synced, arrived));
    long start = System.nanoTime();
    other.start();
    run(trainers[0], steps, synced, arrived);
    other.join();
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  static void run(Trainer t, int steps, boolean synced, AtomicInteger arrived) {
    for (int s = 0; s < steps; s++) {
      t.step(s);
      if (!synced) continue;
      long w = System.nanoTime();
      arrived.incrementAndGet();
      while (arrived.get() < 2 * (s + 1)) Thread.onSpinWait();
      t.waitNanos += System.nanoTime() - w;
    }
  }

  /** Nanoseconds for one round trip of a value between this thread and another. */
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
