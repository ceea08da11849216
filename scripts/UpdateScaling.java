import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether this machine gives the MNIST MLP's SGD update (the two hidden layers' weights, 784x512
 * and 512x256, about 2 MiB each of values and gradients) two threads' speed on its own, away from
 * a training step: the update looped on one thread, and on two that each update the same half of
 * every matrix's rows each time (as {@code forEachRowSlice} gives them), meeting on a spinning
 * count. Prints microseconds per update for each, by round; the first rounds include the JIT's.
 * Not part of the build; the tests only compile it.
 *
 * <pre>
 * java scripts/UpdateScaling.java [ROUNDS]
 * </pre>
 */
public class UpdateScaling {
  static final int N0 = 784 * 512, N1 = 512 * 256, REPS = 4000;

  static void sgd(float[] v, float[] g, int from, int to, float lr) {
    for (int i = from; i < to; i++) v[i] -= lr * g[i];
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    float[] v0 = new float[N0], g0 = new float[N0], v1 = new float[N1], g1 = new float[N1];
    for (int i = 0; i < N0; i++) {
      v0[i] = i % 7;
      g0[i] = 1e-6f * (i % 5);
    }
    for (int i = 0; i < N1; i++) {
      v1[i] = i % 7;
      g1[i] = 1e-6f * (i % 5);
    }
    ExecutorService worker = Executors.newSingleThreadExecutor();
    try {
      for (int round = 0; round < rounds; round++) {
        long t0 = System.nanoTime();
        for (int r = 0; r < REPS; r++) {
          sgd(v0, g0, 0, N0, 1e-3f);
          sgd(v1, g1, 0, N1, 1e-3f);
        }
        long one = System.nanoTime() - t0;
        AtomicInteger started = new AtomicInteger(), done = new AtomicInteger();
        Future<?> second = worker.submit(() -> {
          for (int r = 0; r < REPS; r++) {
            while (started.get() <= r) Thread.onSpinWait();
            sgd(v0, g0, N0 / 2, N0, 1e-3f);
            sgd(v1, g1, N1 / 2, N1, 1e-3f);
            done.incrementAndGet();
          }
        });
        t0 = System.nanoTime();
        for (int r = 0; r < REPS; r++) {
          started.incrementAndGet();
          sgd(v0, g0, 0, N0 / 2, 1e-3f);
          sgd(v1, g1, 0, N1 / 2, 1e-3f);
          while (done.get() <= r) Thread.onSpinWait();
        }
        second.get();
        long two = System.nanoTime() - t0;
        System.out.printf("update: one thread %.1f us, two threads %.1f us (%.2fx)%n", one / 1e3 / REPS,
            two / 1e3 / REPS, (double) one / two);
      }
    } finally {
      worker.shutdownNow();
    }
  }
}
