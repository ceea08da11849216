import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * What limits the output layer's forward product ({@code 64x256x10}, the backend's {@code RowGemm}
 * loop) on a given CPU: the same loop of eight rows of C, one vector each, over k = 256, in three
 * forms that issue the same FMAs on the same vectors of B and differ only in where A's value
 * comes from:
 * <ul>
 *   <li>{@code broadcast}: RowGemm's form, one broadcast of A's value from memory per FMA;</li>
 *   <li>{@code loaded}: a full vector load per FMA from a 8 KiB array that stays in L1 (no
 *       broadcast, wrong sums);</li>
 *   <li>{@code hoisted}: A's eight values broadcast once before the loop (no load and no
 *       broadcast per FMA, wrong sums).</li>
 * </ul>
 * Prints GFLOP/s of the 10 used columns, the median of five timed passes of the whole product.
 * Run one form per JVM, pinned, alternating: {@code for f in broadcast loaded hoisted; do taskset
 * -c 0 java --add-modules jdk.incubator.vector scripts/RowKernelLimits.java $f; done}
 */
public class RowKernelLimits {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
  private static final int M = 64, K = 256, N = 10;

  public static void main(String[] args) {
    String form = args.length > 0 ? args[0] : "broadcast";
    float[] a = new float[M * K];
    float[] b = new float[K * N + S.length()]; // rows read a whole vector wide from where they start
    float[] expanded = new float[8 * 16 * S.length()];
    float[] c = new float[8 * S.length()];
    java.util.Random random = new java.util.Random(1);
    for (int i = 0; i < a.length; i++) a[i] = random.nextFloat();
    for (int i = 0; i < K * N; i++) b[i] = random.nextFloat();
    for (int i = 0; i < expanded.length; i++) expanded[i] = random.nextFloat();
    int reps = 20_000;
    double[] rates = new double[5];
    for (int pass = -3; pass < rates.length; pass++) {
      long t0 = System.nanoTime();
      for (int r = 0; r < reps; r++) {
        for (int i = 0; i < M; i += 8) {
          switch (form) {
            case "broadcast" -> broadcast(a, i * K, b, c);
            case "loaded" -> loaded(expanded, b, c);
            case "hoisted" -> hoisted(a, i * K, b, c);
            default -> throw new IllegalArgumentException("form is broadcast, loaded or hoisted, not " + form);
          }
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (pass >= 0) rates[pass] = 2.0 * M * K * N * reps / seconds / 1e9;
    }
    java.util.Arrays.sort(rates);
    System.out.printf("%s: %.1f GFLOP/s (passes %.1f-%.1f), c[0] %.3f%n", form, rates[2], rates[0], rates[4], c[0]);
  }

  private static void broadcast(float[] a, int a0, float[] b, float[] c) {
    FloatVector c0 = FloatVector.zero(S), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    int a1 = a0 + K, a2 = a1 + K, a3 = a2 + K, a4 = a3 + K, a5 = a4 + K, a6 = a5 + K, a7 = a6 + K;
    for (int p = 0; p < K; p++) {
      FloatVector y = FloatVector.fromArray(S, b, p * N);
      c0 = FloatVector.broadcast(S, a[a0 + p]).fma(y, c0);
      c1 = FloatVector.broadcast(S, a[a1 + p]).fma(y, c1);
      c2 = FloatVector.broadcast(S, a[a2 + p]).fma(y, c2);
      c3 = FloatVector.broadcast(S, a[a3 + p]).fma(y, c3);
      c4 = FloatVector.broadcast(S, a[a4 + p]).fma(y, c4);
      c5 = FloatVector.broadcast(S, a[a5 + p]).fma(y, c5);
      c6 = FloatVector.broadcast(S, a[a6 + p]).fma(y, c6);
      c7 = FloatVector.broadcast(S, a[a7 + p]).fma(y, c7);
    }
    store(c, c0, c1, c2, c3, c4, c5, c6, c7);
  }

  private static void loaded(float[] x, float[] b, float[] c) {
    FloatVector c0 = FloatVector.zero(S), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    int l = S.length();
    for (int p = 0; p < K; p++) {
      FloatVector y = FloatVector.fromArray(S, b, p * N);
      int q = (p & 15) * l;
      c0 = FloatVector.fromArray(S, x, q).fma(y, c0);
      c1 = FloatVector.fromArray(S, x, 16 * l + q).fma(y, c1);
      c2 = FloatVector.fromArray(S, x, 32 * l + q).fma(y, c2);
      c3 = FloatVector.fromArray(S, x, 48 * l + q).fma(y, c3);
      c4 = FloatVector.fromArray(S, x, 64 * l + q).fma(y, c4);
      c5 = FloatVector.fromArray(S, x, 80 * l + q).fma(y, c5);
      c6 = FloatVector.fromArray(S, x, 96 * l + q).fma(y, c6);
      c7 = FloatVector.fromArray(S, x, 112 * l + q).fma(y, c7);
    }
    store(c, c0, c1, c2, c3, c4, c5, c6, c7);
  }

  private static void hoisted(float[] a, int a0, float[] b, float[] c) {
    FloatVector c0 = FloatVector.zero(S), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
    FloatVector x0 = FloatVector.broadcast(S, a[a0]), x1 = FloatVector.broadcast(S, a[a0 + K]);
    FloatVector x2 = FloatVector.broadcast(S, a[a0 + 2 * K]), x3 = FloatVector.broadcast(S, a[a0 + 3 * K]);
    FloatVector x4 = FloatVector.broadcast(S, a[a0 + 4 * K]), x5 = FloatVector.broadcast(S, a[a0 + 5 * K]);
    FloatVector x6 = FloatVector.broadcast(S, a[a0 + 6 * K]), x7 = FloatVector.broadcast(S, a[a0 + 7 * K]);
    for (int p = 0; p < K; p++) {
      FloatVector y = FloatVector.fromArray(S, b, p * N);
      c0 = x0.fma(y, c0);
      c1 = x1.fma(y, c1);
      c2 = x2.fma(y, c2);
      c3 = x3.fma(y, c3);
      c4 = x4.fma(y, c4);
      c5 = x5.fma(y, c5);
      c6 = x6.fma(y, c6);
      c7 = x7.fma(y, c7);
    }
    store(c, c0, c1, c2, c3, c4, c5, c6, c7);
  }

  private static void store(float[] c, FloatVector c0, FloatVector c1, FloatVector c2, FloatVector c3,
      FloatVector c4, FloatVector c5, FloatVector c6, FloatVector c7) {
    int l = S.length();
    c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7).add(FloatVector.fromArray(S, c, 0)).intoArray(c, 0);
  }
}
