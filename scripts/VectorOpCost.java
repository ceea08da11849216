import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * What one Vector API operation costs before the JIT's second tier has compiled it: run with
 * {@code -Xint} (interpreted), {@code -XX:TieredStopAtLevel=1} (the first tier only) and without
 * flags (both tiers), three rounds each of 1,000 iterations of a load-multiply-store, a
 * broadcast-FMA with two loads and a store, and a gather-store.
 *
 * <p>Usage: {@code java --add-modules jdk.incubator.vector [-Xint | -XX:TieredStopAtLevel=1]
 * scripts/VectorOpCost.java}
 */
public class VectorOpCost {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

  public static void main(String[] args) {
    float[] src = new float[16 * 16 * 10];
    float[] dst = new float[4096];
    int[] lanes = new int[S.length()];
    for (int i = 0; i < lanes.length; i++) lanes[i] = i * 10;
    for (int round = 1; round <= 3; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < 1000; i++) FloatVector.fromArray(S, src, i % 100).mul(2f).intoArray(dst, (i % 200) * 16);
      long t1 = System.nanoTime();
      for (int i = 0; i < 1000; i++) {
        FloatVector.broadcast(S, src[i % 10]).fma(FloatVector.fromArray(S, src, i % 100), FloatVector.fromArray(S, dst, 0))
            .intoArray(dst, 16);
      }
      long t2 = System.nanoTime();
      for (int i = 0; i < 1000; i++) FloatVector.fromArray(S, src, i % 10, lanes, 0).intoArray(dst, (i % 200) * 16);
      long t3 = System.nanoTime();
      System.out.printf("round %d, µs per iteration: load-mul-store %.2f, broadcast-fma-store %.2f, gather-store %.2f%n",
          round, (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
    }
  }
}
