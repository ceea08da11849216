import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What two cores give one training step of the MNIST MLP (784-512-256-10, ReLU, SGD, batch 64)
 * three ways, alternating in one JVM so that all see the same host:
 * <ul>
 *   <li>{@code one}: one thread, the whole batch (as {@code --compute-threads 1}); and, for the
 *       replicas' measure, one thread on half the batch alone;
 *   <li>{@code split}: one model whose products are cut between two threads (as
 *       {@code --compute-threads 2}), with the batch copied on the caller, and with each thread
 *       copying the input columns it reads;
 *   <li>{@code replicas}: two models, one per thread, each on its half of the batch (32 rows); the
 *       two wait for each other, then each adds the other's gradients to its own and updates its
 *       own copy of the weights with the sum, so each core writes only its own data and reads the
 *       other's gradients once a step (2.1 MB). The design a step would need to keep each core
 *       to data of its own; it gives up the one-thread bits (the halves' sums are added in another
 *       order), so this checks how far its weights drift from one thread's.
 * </ul>
 * Microseconds a step for each, and each replica's time in its half-step and in the exchange; and
 * after each round, how long a cache line takes to go from one core to the other and back.
 * Each step copies its batch's rows, drawn from 4096 random rows, into the model's input on the
 * thread that starts the step, as the trainer's reader does (each replica its own half), unless the
 * third argument is {@code fixed}: then one batch, read once, serves every step. The update is the
 * same plain loop in all three.
 * Not part of the build; the tests only compile it.
 *
 * <pre>
 * mvn -q -o install -DskipTests -pl compute
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/ReplicaStep.java [ROUNDS] [STEPS] [fixed]
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/ReplicaStep.java ping
 * </pre>
 * {@code ping} prints the round trip alone, to bracket other runs with: it tells the host's phases
 * apart, tens of ns when the two vCPUs run on cores near each other, hundreds when not.
 */
public class ReplicaStep {
  static final int BATCH = 64;
  static final int[] HIDDEN = {512, 256};
  static final float LR = 0.05f;
  static final int POOL_ROWS = 4096;
  static final float[] POOL = new float[POOL_ROWS * 784];
  static final int[] POOL_LABELS = new int[POOL_ROWS];
  /** Whether every step trains on the batch of step 0, read before the timing. */
  static boolean fixed;

  /** Rows {@code [first, first + x.rows())} of step {@code step}'s batch into {@code x} and {@code labels}. */
  static void read(long step, int first, Tensor x, int[] labels) {
    read(step, first, x, labels, 0, 784);
  }

  /** The same, features {@code [from, to)} of each row alone. */
  static void read(long step, int first, Tensor x, int[] labels, int from, int to) {
    if (fixed) return;
    for (int k = 0; k < labels.length; k++) {
      int row = (int) Math.floorMod((step * BATCH + first + k) * 2654435761L, (long) POOL_ROWS);
      System.arraycopy(POOL, row * 784 + from, x.data(), k * 784 + from, to - from);
      labels[k] = POOL_LABELS[row];
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("ping")) {
      // Only the round trip, to bracket other runs with: the median of five sets of 200,000.
      double[] ns = new double[5];
      for (int i = 0; i < ns.length; i++) ns[i] = pingPong(200_000);
      java.util.Arrays.sort(ns);
      System.out.printf("a cache line's round trip between two threads %.0f ns (of %.0f-%.0f)%n", ns[2], ns[0], ns[4]);
      return;
    }
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
    fixed = args.length > 2 && args[2].equals("fixed");
    Random r = new Random(1);
    for (int i = 0; i < POOL.length; i++) POOL[i] = r.nextFloat();
    for (int i = 0; i < POOL_LABELS.length; i++) POOL_LABELS[i] = r.nextInt(10);
    Tensor x = Tensor.zeros(BATCH, 784);
    int[] labels = new int[BATCH];
    Tensor[] halves = {Tensor.zeros(BATCH / 2, 784), Tensor.zeros(BATCH / 2, 784)};
    int[][] halfLabels = {new int[BATCH / 2], new int[BATCH / 2]};
    if (fixed) {
      fixed = false;
      read(0, 0, x, labels);
      read(0, 0, halves[0], halfLabels[0]);
      read(0, BATCH / 2, halves[1], halfLabels[1]);
      fixed = true;
    }

    CpuBackend oneBackend = CpuBackend.create(1);
    CpuBackend splitBackend = CpuBackend.create(2);
    Mlp one = Mlp.create(oneBackend, 784, HIDDEN, 10, Activation.RELU, 7);
    Mlp split = Mlp.create(splitBackend, 784, HIDDEN, 10, Activation.RELU, 7);
    Mlp oneHalf = Mlp.create(oneBackend, 784, HIDDEN, 10, Activation.RELU, 7);
    Replicas replicas = new Replicas(halves, halfLabels);
    try {
      // Two rounds first, not printed: the JIT's.
      for (int round = 0; round < rounds + 2; round++) {
        double oneUs = timeSteps(one, x, labels, steps);
        double halfUs = timeSteps(oneHalf, halves[0], halfLabels[0], steps);
        double splitUs = timeSteps(split, x, labels, steps);
        double cutReadUs = timeSteps(split, x, labels, steps, true);
        double[] rep = replicas.run(steps, true);
        double[] apart = replicas.run(steps, false);
        double pingPongNs = pingPong(200_000);
        if (round < 2) continue;
        System.out.printf("one %.1f us (batch 32 alone: %.1f)  split %.1f us (%.2fx; the read cut too %.1f, %.2fx)"
                + "  replicas %.1f us (%.2fx; half-step %.1f, exchange and update %.1f, waits %.1f)%n", oneUs, halfUs,
            splitUs, oneUs / splitUs, cutReadUs, oneUs / cutReadUs, rep[0], oneUs / rep[0], rep[1], rep[2], rep[3]);
        System.out.printf("    replicas without the exchange %.1f us (half-step %.1f, update %.1f, waits %.1f);"
            + " a cache line's round trip between the two threads %.0f ns%n", apart[0], apart[1], apart[2], apart[3],
            pingPongNs);
      }
      // Fresh models for the check: the timed replicas also trained apart.
      Mlp reference = Mlp.create(oneBackend, 784, HIDDEN, 10, Activation.RELU, 7);
      Replicas check = new Replicas(halves, halfLabels);
      int checked = 100;
      timeSteps(reference, x, labels, checked);
      check.run(checked, true);
      System.out.printf("after %d steps from the same weights: largest |replica - one thread| over the weights %.3g,"
              + " largest |replica 0 - replica 1| %.3g%n", checked, maxDiff(check.models[0], reference),
          maxDiff(check.models[0], check.models[1]));
      check.stop();
    } finally {
      replicas.stop();
      oneBackend.close();
      splitBackend.close();
    }
  }

  /**
   * Steps of one model on its backend's threads; the update after the step, each weight matrix's
   * rows on the thread that computed their gradient (as the single process's trainer does).
   */
  static double timeSteps(Mlp model, Tensor x, int[] labels, int steps) {
    return timeSteps(model, x, labels, steps, false);
  }

  /**
   * With {@code cutRead}, each thread copies the features whose rows of the first layer's weights
   * it owns ({@code forEachRowSlice} over them), which are the input's columns it reads in that
   * layer's forward (cut by depth) and weight gradient.
   */
  static double timeSteps(Mlp model, Tensor x, int[] labels, int steps, boolean cutRead) {
    long start = System.nanoTime();
    for (int i = 0; i < steps; i++) {
      long step = i;
      if (cutRead) {
        model.backend().forEachRowSlice(784, HIDDEN[0], (from, to) -> read(step, 0, x, labels, from, to));
      } else {
        read(i, 0, x, labels);
      }
      model.forwardBackward(x, labels, p -> { });
      for (Parameter p : model.parameters()) {
        float[] v = p.value().data(), g = p.grad().data();
        int cols = p.value().cols();
        if (v.length > cols) {
          model.backend().forEachRowSlice(v.length / cols, cols, (from, to) -> sgd(v, g, from * cols, to * cols));
        } else {
          sgd(v, g, 0, v.length);
        }
      }
    }
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  /**
   * Nanoseconds for one round trip of a value between this thread and another, each spinning on
   * what the other wrote last: what it costs the two cores to hand each other a cache line now.
   */
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

  static void sgd(float[] v, float[] g, int from, int to) {
    for (int i = from; i < to; i++) v[i] -= LR * g[i];
  }

  /** {@code v -= LR * g}, or with {@code other}: {@code v -= LR * (g + other) / 2}. */
  static void sgd(float[] v, float[] g, float[] other) {
    if (other == null) {
      for (int i = 0; i < v.length; i++) v[i] -= LR * g[i];
    } else {
      for (int i = 0; i < v.length; i++) v[i] -= LR * 0.5f * (g[i] + other[i]);
    }
  }

  static double maxDiff(Mlp a, Mlp b) {
    double max = 0;
    List<Parameter> pa = a.parameters(), pb = b.parameters();
    for (int i = 0; i < pa.size(); i++) {
      float[] va = pa.get(i).value().data(), vb = pb.get(i).value().data();
      for (int j = 0; j < va.length; j++) max = Math.max(max, Math.abs(va[j] - vb[j]));
    }
    return max;
  }

  /** Two one-thread models on threads of their own, meeting at a spinning barrier twice a step. */
  static final class Replicas {
    final Mlp[] models = new Mlp[2];
    final CpuBackend[] backends = new CpuBackend[2];
    final Tensor[] halves;
    final int[][] labels;
    final AtomicInteger arrived = new AtomicInteger();
    final Semaphore start = new Semaphore(0);
    volatile int stepsToRun;
    volatile boolean exchange;
    volatile boolean stopped;
    final long[] halfNanos = new long[2], exchangeNanos = new long[2], waitNanos = new long[2];
    final AtomicInteger done = new AtomicInteger();
    final Thread worker;

    Replicas(Tensor[] halves, int[][] labels) {
      this.halves = halves;
      this.labels = labels;
      for (int i = 0; i < 2; i++) {
        backends[i] = CpuBackend.create(1);
        models[i] = Mlp.create(backends[i], 784, HIDDEN, 10, Activation.RELU, 7);
      }
      worker = new Thread(this::workerLoop, "replica-1");
      worker.setDaemon(true);
      worker.start();
    }

    /**
     * Runs {@code steps} steps on both replicas; microseconds a step, then replica 0's split of it.
     * Without {@code exchange} each updates its weights with its own gradients alone, which tells
     * what reading the other's costs.
     */
    double[] run(int steps, boolean exchange) {
      this.exchange = exchange;
      java.util.Arrays.fill(halfNanos, 0);
      java.util.Arrays.fill(exchangeNanos, 0);
      java.util.Arrays.fill(waitNanos, 0);
      done.set(0);
      stepsToRun = steps;
      long t = System.nanoTime();
      start.release();
      runSteps(0, steps);
      while (done.get() < 1) Thread.onSpinWait();
      double us = (System.nanoTime() - t) / 1e3 / steps;
      return new double[] {us, halfNanos[0] / 1e3 / steps, exchangeNanos[0] / 1e3 / steps, waitNanos[0] / 1e3 / steps};
    }

    /** Replica 1's thread: blocked between runs, so that it leaves the other modes both cores. */
    void workerLoop() {
      while (true) {
        start.acquireUninterruptibly();
        if (stopped) return;
        runSteps(1, stepsToRun);
        done.incrementAndGet();
      }
    }

    /** Barrier {@code k} of the run (k counts up by one per barrier for both threads). */
    void await(int me, long k) {
      long t = System.nanoTime();
      arrived.incrementAndGet();
      while (arrived.get() < 2 * k) Thread.onSpinWait();
      waitNanos[me] += System.nanoTime() - t;
    }

    void runSteps(int me, int steps) {
      int other = 1 - me;
      List<Parameter> own = models[me].parameters(), theirs = models[other].parameters();
      long barrier = arrived.get() / 2;
      for (int s = 0; s < steps; s++) {
        long t0 = System.nanoTime();
        read(s, me * BATCH / 2, halves[me], labels[me]);
        models[me].forwardBackward(halves[me], labels[me], p -> { });
        long t1 = System.nanoTime();
        await(me, ++barrier);
        long t2 = System.nanoTime();
        for (int i = 0; i < own.size(); i++) {
          sgd(own.get(i).value().data(), own.get(i).grad().data(), exchange ? theirs.get(i).grad().data() : null);
        }
        long t3 = System.nanoTime();
        // The other may not overwrite its gradients with the next step's before this one read them.
        await(me, ++barrier);
        halfNanos[me] += t1 - t0;
        exchangeNanos[me] += t3 - t2;
      }
    }

    void stop() {
      stopped = true;
      start.release();
      backends[0].close();
      backends[1].close();
    }
  }
}
