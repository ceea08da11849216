import java.util.concurrent.atomic.AtomicInteger;

/**
 * What cutting a row-major weight matrix between two cores by columns costs against cutting it by
 * rows: two threads update the first layer's weights of the MNIST MLP (784 x 512 floats, SGD, as
 * the step's update) each step, each its half, and meet after each step; {@code rows} gives thread
 * t rows [392t, 392t + 392), {@code columns} columns [256t, 256t + 256) of every row, so the two
 * halves meet inside a cache line of each row unless the array's first float starts a line;
 * {@code gap N} is {@code columns} less the N floats on each side of the cut (with 16 or more, no
 * line holds both threads' floats). Also {@code one}: one thread updating the whole matrix, and
 * {@code one by columns}: one thread updating it in the two column halves, one after the other.
 * Prints microseconds a step for each, alternating in one JVM, and each round's cache-line round
 * trip between the threads (as {@code ReplicaStep.java ping}), which tells whether the two cores
 * share a cache. Not part of the build; the tests only compile it.
 *
 * <pre>
 * java scripts/ColumnCut.java [ROUNDS] [STEPS]
 * </pre>
 */
public class ColumnCut {
  static final int ROWS = 784, COLS = 512;
  static final float LR = 0.05f;
  static final float[] W = new float[ROWS * COLS], G = new float[ROWS * COLS];

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    int steps = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    for (int i = 0; i < G.length; i++) G[i] = (i % 7) * 1e-6f;
    for (int r = 0; r <= rounds; r++) {
      double one = one(steps, false), oneByColumns = one(steps, true), byRows = two(steps, -1),
          byColumns = two(steps, 0), gap16 = two(steps, 16), gap64 = two(steps, 64);
      // Round 0 warms the JIT up.
      if (r == 0) continue;
      System.out.printf("round %d, µs a step: one %.1f, one by columns %.1f, rows %.1f, columns %.1f, gap 16 %.1f,"
          + " gap 64 %.1f; round trip %d ns%n", r, one, oneByColumns, byRows, byColumns, gap16, gap64, pingPong());
    }
  }

  static void update(int from, int to) {
    for (int i = from; i < to; i++) W[i] -= LR * G[i];
  }

  static double one(int steps, boolean byColumns) {
    long start = System.nanoTime();
    for (int s = 0; s < steps; s++) {
      if (byColumns) {
        for (int half = 0; half < 2; half++) {
          for (int r = 0; r < ROWS; r++) update(r * COLS + half * COLS / 2, r * COLS + (half + 1) * COLS / 2);
        }
      } else {
        update(0, W.length);
      }
    }
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  /**
   * Both threads update their halves each step and meet; µs a step. {@code gap} -1: by rows; 0 or
   * more: by columns, less {@code gap} floats on each side of the cut.
   */
  static double two(int steps, int gap) throws InterruptedException {
    AtomicInteger arrived = new AtomicInteger();
    Runnable[] halves = new Runnable[2];
    for (int t = 0; t < 2; t++) {
      int part = t;
      halves[t] = () -> {
        for (int s = 1; s <= steps; s++) {
          if (gap >= 0) {
            int c0 = part == 0 ? 0 : COLS / 2 + gap, c1 = part == 0 ? COLS / 2 - gap : COLS;
            for (int r = 0; r < ROWS; r++) update(r * COLS + c0, r * COLS + c1);
          } else {
            update(part * ROWS / 2 * COLS, (part + 1) * ROWS / 2 * COLS);
          }
          arrived.incrementAndGet();
          while (arrived.get() < 2 * s) Thread.onSpinWait();
        }
      };
    }
    Thread other = new Thread(halves[1]);
    long start = System.nanoTime();
    other.start();
    halves[0].run();
    other.join();
    return (System.nanoTime() - start) / 1e3 / steps;
  }

  /** The median round trip of a cache line between this thread and another, in ns. */
  static long pingPong() throws InterruptedException {
    AtomicInteger ball = new AtomicInteger();
    int trips = 20_000;
    Thread other = new Thread(() -> {
      for (int i = 0; i < trips; i++) {
        while (ball.get() != 2 * i + 1) Thread.onSpinWait();
        ball.set(2 * i + 2);
      }
    });
    other.start();
    long[] t = new long[trips];
    for (int i = 0; i < trips; i++) {
      long s = System.nanoTime();
      ball.set(2 * i + 1);
      while (ball.get() != 2 * i + 2) Thread.onSpinWait();
      t[i] = System.nanoTime() - s;
    }
    other.join();
    java.util.Arrays.sort(t);
    return t[trips / 2];
  }
}
