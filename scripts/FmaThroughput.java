import java.util.concurrent.CyclicBarrier;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The machine's peak of fused multiply-adds from registers alone, on one thread and on two at once:
 * twelve independent FMA chains of the widest vectors, no loads or stores in the loop. Where the
 * two threads each keep the one-thread rate, the two CPUs have an FMA unit each; where each gets
 * about half, they share one core's units (SMT siblings), and no split of a product between them
 * can make it faster than the one-thread product. Not part of the build; the tests only compile it.
 *
 * <p>With a size in KiB, the same for reading: each thread sums its own array of that size over and
 * over (from L1, L2, L3 or memory by the size), so that the rate two threads keep at once shows
 * whether the level that array lives in is shared.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector scripts/FmaThroughput.java [ROUNDS] [KIB]
 * </pre>
 */
public class FmaThroughput {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  static final long ITERATIONS = 20_000_000L;

  /** Runs ITERATIONS x 12 FMAs of S's width; returns a value so that the work is not dropped. */
  static float chains(float seed) {
    FloatVector m = FloatVector.broadcast(S, 0.999999f), d = FloatVector.broadcast(S, 1e-7f);
    FloatVector a0 = FloatVector.broadcast(S, seed), a1 = a0.add(1), a2 = a0.add(2), a3 = a0.add(3);
    FloatVector a4 = a0.add(4), a5 = a0.add(5), a6 = a0.add(6), a7 = a0.add(7);
    FloatVector a8 = a0.add(8), a9 = a0.add(9), a10 = a0.add(10), a11 = a0.add(11);
    for (long i = 0; i < ITERATIONS; i++) {
      a0 = a0.fma(m, d); a1 = a1.fma(m, d); a2 = a2.fma(m, d); a3 = a3.fma(m, d);
      a4 = a4.fma(m, d); a5 = a5.fma(m, d); a6 = a6.fma(m, d); a7 = a7.fma(m, d);
      a8 = a8.fma(m, d); a9 = a9.fma(m, d); a10 = a10.fma(m, d); a11 = a11.fma(m, d);
    }
    return a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7).add(a8).add(a9).add(a10).add(a11)
        .reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
  }

  /** Sums {@code a} {@code times} times, a vector of floats at a time. */
  static float reads(float[] a, int times) {
    float sum = 0;
    for (int t = 0; t < times; t++) sum += pass(a);
    return sum;
  }

  /** One pass over {@code a}: called often, so that C2 compiles it whole, not only its loop. */
  static float pass(float[] a) {
    FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
    int step = 4 * S.length();
    for (int i = 0; i + step <= a.length; i += step) {
      s0 = s0.add(FloatVector.fromArray(S, a, i));
      s1 = s1.add(FloatVector.fromArray(S, a, i + S.length()));
      s2 = s2.add(FloatVector.fromArray(S, a, i + 2 * S.length()));
      s3 = s3.add(FloatVector.fromArray(S, a, i + 3 * S.length()));
    }
    return s0.add(s1).add(s2).add(s3).reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
  }

  static double gflops(double seconds) {
    return ITERATIONS * 12.0 * S.length() * 2 / seconds / 1e9;
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    if (args.length > 1) {
      readRounds(rounds, Integer.parseInt(args[1]));
      return;
    }
    float sink = 0;
    for (int w = 0; w < 3; w++) sink += chains(w); // compiled by C2 before anything is timed
    System.out.printf("%d-lane FMAs, %d x 12 chains a thread%n", S.length(), ITERATIONS);
    for (int r = 1; r <= rounds; r++) {
      int round = r;
      Timed[] t = aloneThenTwoAtOnce(id -> chains(id + round));
      sink += t[0].sink() + t[1].sink() + t[2].sink();
      System.out.printf("round %d: one thread %.1f GFLOP/s; two at once %.1f and %.1f GFLOP/s (%.2f and %.2f of one)%n",
          r, gflops(t[0].seconds()), gflops(t[1].seconds()), gflops(t[2].seconds()),
          t[0].seconds() / t[1].seconds(), t[0].seconds() / t[2].seconds());
    }
    System.out.println(sink == 42 ? "" : "done");
  }

  static void readRounds(int rounds, int kib) throws Exception {
    int floats = kib * 256;
    int times = (int) Math.max(1, 4_000_000_000L / 4 / floats / 4); // about 1 GB read a thread
    float[][] arrays = {new float[floats], new float[floats]};
    for (float[] a : arrays) java.util.Arrays.fill(a, 1f);
    float sink = 0;
    float[] small = new float[4096];
    for (int w = 0; w < 50_000; w++) sink += pass(small); // compiled by C2 before anything is timed
    double bytes = 4.0 * floats * times;
    System.out.printf("reading %d KiB a thread, %d times%n", kib, times);
    for (int r = 1; r <= rounds; r++) {
      Timed[] t = aloneThenTwoAtOnce(id -> reads(arrays[id], times));
      sink += t[0].sink() + t[1].sink() + t[2].sink();
      System.out.printf("round %d: one thread %.1f GB/s; two at once %.1f and %.1f GB/s (%.2f and %.2f of one)%n", r,
          bytes / t[0].seconds() / 1e9, bytes / t[1].seconds() / 1e9, bytes / t[2].seconds() / 1e9,
          t[0].seconds() / t[1].seconds(), t[0].seconds() / t[2].seconds());
    }
    System.out.println(sink == 42 ? "" : "done");
  }

  record Timed(double seconds, float sink) {}

  /** {@code work(0)} alone on this thread, then {@code work(0)} and {@code work(1)} on two threads at once. */
  static Timed[] aloneThenTwoAtOnce(java.util.function.IntToDoubleFunction work) throws Exception {
    Timed[] t = new Timed[3];
    long t0 = System.nanoTime();
    float alone = (float) work.applyAsDouble(0);
    t[0] = new Timed((System.nanoTime() - t0) / 1e9, alone);
    CyclicBarrier start = new CyclicBarrier(2);
    Thread[] threads = new Thread[2];
    for (int i = 0; i < 2; i++) {
      int id = i;
      threads[i] = new Thread(() -> {
        try {
          start.await();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        long s = System.nanoTime();
        float sink = (float) work.applyAsDouble(id);
        t[1 + id] = new Timed((System.nanoTime() - s) / 1e9, sink);
      });
      threads[i].start();
    }
    for (Thread thread : threads) thread.join();
    return t;
  }
}
