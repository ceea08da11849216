package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link VectorGemm}'s micro-kernels, one per tile height: each keeps an mr x {@link VectorGemm#NR}
 * tile of C in named vector accumulators (an array of vectors would live in memory).
 */
final class MicroKernels {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  private static final int NR = VectorGemm.NR;

  private MicroKernels() {}

  /**
   * Writes the mr x NR product of one packed A micro-panel and one B micro-panel (packed, or B's
   * own rows: {@code bStride} apart) to {@code tile}. The accumulators go to the scratch tile rather than straight into C because any
   * possible deoptimization (a failed range check on C, an untaken beta branch) while they are
   * live makes C2 box every vector inside the k loop, which costs a factor of ten.
   */
  static void run(int mr, float[] ap, int ao, float[] bp, int bo, int bStride, int kc,
      float[] tile) {
    if (mr == 12) {
      kernel12(ap, ao, bp, bo, bStride, kc, tile);
    } else if (mr == 8) {
      kernel8(ap, ao, bp, bo, bStride, kc, tile);
    } else {
      kernel6(ap, ao, bp, bo, bStride, kc, tile);
    }
  }

  private static void kernel12(float[] ap, int ao, float[] bp, int bo, int bStride, int kc,
      float[] tile) {
    FloatVector c00 = FloatVector.zero(SPECIES);
    FloatVector c01 = FloatVector.zero(SPECIES);
    FloatVector c10 = FloatVector.zero(SPECIES);
    FloatVector c11 = FloatVector.zero(SPECIES);
    FloatVector c20 = FloatVector.zero(SPECIES);
    FloatVector c21 = FloatVector.zero(SPECIES);
    FloatVector c30 = FloatVector.zero(SPECIES);
    FloatVector c31 = FloatVector.zero(SPECIES);
    FloatVector c40 = FloatVector.zero(SPECIES);
    FloatVector c41 = FloatVector.zero(SPECIES);
    FloatVector c50 = FloatVector.zero(SPECIES);
    FloatVector c51 = FloatVector.zero(SPECIES);
    FloatVector c60 = FloatVector.zero(SPECIES);
    FloatVector c61 = FloatVector.zero(SPECIES);
    FloatVector c70 = FloatVector.zero(SPECIES);
    FloatVector c71 = FloatVector.zero(SPECIES);
    FloatVector c80 = FloatVector.zero(SPECIES);
    FloatVector c81 = FloatVector.zero(SPECIES);
    FloatVector c90 = FloatVector.zero(SPECIES);
    FloatVector c91 = FloatVector.zero(SPECIES);
    FloatVector c100 = FloatVector.zero(SPECIES);
    FloatVector c101 = FloatVector.zero(SPECIES);
    FloatVector c110 = FloatVector.zero(SPECIES);
    FloatVector c111 = FloatVector.zero(SPECIES);
    for (int p = 0; p < kc; p++) {
      FloatVector b0 = FloatVector.fromArray(SPECIES, bp, bo);
      FloatVector b1 = FloatVector.fromArray(SPECIES, bp, bo + VL);
      FloatVector x = FloatVector.broadcast(SPECIES, ap[ao]);
      c00 = x.fma(b0, c00);
      c01 = x.fma(b1, c01);
      x = FloatVector.broadcast(SPECIES, ap[ao + 1]);
      c10 = x.fma(b0, c10);
      c11 = x.fma(b1, c11);
      x = FloatVector.broadcast(SPECIES, ap[ao + 2]);
      c20 = x.fma(b0, c20);
      c21 = x.fma(b1, c21);
      x = FloatVector.broadcast(SPECIES, ap[ao + 3]);
      c30 = x.fma(b0, c30);
      c31 = x.fma(b1, c31);
      x = FloatVector.broadcast(SPECIES, ap[ao + 4]);
      c40 = x.fma(b0, c40);
      c41 = x.fma(b1, c41);
      x = FloatVector.broadcast(SPECIES, ap[ao + 5]);
      c50 = x.fma(b0, c50);
      c51 = x.fma(b1, c51);
      x = FloatVector.broadcast(SPECIES, ap[ao + 6]);
      c60 = x.fma(b0, c60);
      c61 = x.fma(b1, c61);
      x = FloatVector.broadcast(SPECIES, ap[ao + 7]);
      c70 = x.fma(b0, c70);
      c71 = x.fma(b1, c71);
      x = FloatVector.broadcast(SPECIES, ap[ao + 8]);
      c80 = x.fma(b0, c80);
      c81 = x.fma(b1, c81);
      x = FloatVector.broadcast(SPECIES, ap[ao + 9]);
      c90 = x.fma(b0, c90);
      c91 = x.fma(b1, c91);
      x = FloatVector.broadcast(SPECIES, ap[ao + 10]);
      c100 = x.fma(b0, c100);
      c101 = x.fma(b1, c101);
      x = FloatVector.broadcast(SPECIES, ap[ao + 11]);
      c110 = x.fma(b0, c110);
      c111 = x.fma(b1, c111);
      ao += 12;
      bo += bStride;
    }
    c00.intoArray(tile, 0);
    c01.intoArray(tile, 0 + VL);
    c10.intoArray(tile, NR);
    c11.intoArray(tile, NR + VL);
    c20.intoArray(tile, 2 * NR);
    c21.intoArray(tile, 2 * NR + VL);
    c30.intoArray(tile, 3 * NR);
    c31.intoArray(tile, 3 * NR + VL);
    c40.intoArray(tile, 4 * NR);
    c41.intoArray(tile, 4 * NR + VL);
    c50.intoArray(tile, 5 * NR);
    c51.intoArray(tile, 5 * NR + VL);
    c60.intoArray(tile, 6 * NR);
    c61.intoArray(tile, 6 * NR + VL);
    c70.intoArray(tile, 7 * NR);
    c71.intoArray(tile, 7 * NR + VL);
    c80.intoArray(tile, 8 * NR);
    c81.intoArray(tile, 8 * NR + VL);
    c90.intoArray(tile, 9 * NR);
    c91.intoArray(tile, 9 * NR + VL);
    c100.intoArray(tile, 10 * NR);
    c101.intoArray(tile, 10 * NR + VL);
    c110.intoArray(tile, 11 * NR);
    c111.intoArray(tile, 11 * NR + VL);
  }

  private static void kernel8(float[] ap, int ao, float[] bp, int bo, int bStride, int kc,
      float[] tile) {
    FloatVector c00 = FloatVector.zero(SPECIES);
    FloatVector c01 = FloatVector.zero(SPECIES);
    FloatVector c10 = FloatVector.zero(SPECIES);
    FloatVector c11 = FloatVector.zero(SPECIES);
    FloatVector c20 = FloatVector.zero(SPECIES);
    FloatVector c21 = FloatVector.zero(SPECIES);
    FloatVector c30 = FloatVector.zero(SPECIES);
    FloatVector c31 = FloatVector.zero(SPECIES);
    FloatVector c40 = FloatVector.zero(SPECIES);
    FloatVector c41 = FloatVector.zero(SPECIES);
    FloatVector c50 = FloatVector.zero(SPECIES);
    FloatVector c51 = FloatVector.zero(SPECIES);
    FloatVector c60 = FloatVector.zero(SPECIES);
    FloatVector c61 = FloatVector.zero(SPECIES);
    FloatVector c70 = FloatVector.zero(SPECIES);
    FloatVector c71 = FloatVector.zero(SPECIES);
    for (int p = 0; p < kc; p++) {
      FloatVector b0 = FloatVector.fromArray(SPECIES, bp, bo);
      FloatVector b1 = FloatVector.fromArray(SPECIES, bp, bo + VL);
      FloatVector x = FloatVector.broadcast(SPECIES, ap[ao]);
      c00 = x.fma(b0, c00);
      c01 = x.fma(b1, c01);
      x = FloatVector.broadcast(SPECIES, ap[ao + 1]);
      c10 = x.fma(b0, c10);
      c11 = x.fma(b1, c11);
      x = FloatVector.broadcast(SPECIES, ap[ao + 2]);
      c20 = x.fma(b0, c20);
      c21 = x.fma(b1, c21);
      x = FloatVector.broadcast(SPECIES, ap[ao + 3]);
      c30 = x.fma(b0, c30);
      c31 = x.fma(b1, c31);
      x = FloatVector.broadcast(SPECIES, ap[ao + 4]);
      c40 = x.fma(b0, c40);
      c41 = x.fma(b1, c41);
      x = FloatVector.broadcast(SPECIES, ap[ao + 5]);
      c50 = x.fma(b0, c50);
      c51 = x.fma(b1, c51);
      x = FloatVector.broadcast(SPECIES, ap[ao + 6]);
      c60 = x.fma(b0, c60);
      c61 = x.fma(b1, c61);
      x = FloatVector.broadcast(SPECIES, ap[ao + 7]);
      c70 = x.fma(b0, c70);
      c71 = x.fma(b1, c71);
      ao += 8;
      bo += bStride;
    }
    c00.intoArray(tile, 0);
    c01.intoArray(tile, VL);
    c10.intoArray(tile, NR);
    c11.intoArray(tile, NR + VL);
    c20.intoArray(tile, 2 * NR);
    c21.intoArray(tile, 2 * NR + VL);
    c30.intoArray(tile, 3 * NR);
    c31.intoArray(tile, 3 * NR + VL);
    c40.intoArray(tile, 4 * NR);
    c41.intoArray(tile, 4 * NR + VL);
    c50.intoArray(tile, 5 * NR);
    c51.intoArray(tile, 5 * NR + VL);
    c60.intoArray(tile, 6 * NR);
    c61.intoArray(tile, 6 * NR + VL);
    c70.intoArray(tile, 7 * NR);
    c71.intoArray(tile, 7 * NR + VL);
  }

  private static void kernel6(float[] ap, int ao, float[] bp, int bo, int bStride, int kc,
      float[] tile) {
    FloatVector c00 = FloatVector.zero(SPECIES);
    FloatVector c01 = FloatVector.zero(SPECIES);
    FloatVector c10 = FloatVector.zero(SPECIES);
    FloatVector c11 = FloatVector.zero(SPECIES);
    FloatVector c20 = FloatVector.zero(SPECIES);
    FloatVector c21 = FloatVector.zero(SPECIES);
    FloatVector c30 = FloatVector.zero(SPECIES);
    FloatVector c31 = FloatVector.zero(SPECIES);
    FloatVector c40 = FloatVector.zero(SPECIES);
    FloatVector c41 = FloatVector.zero(SPECIES);
    FloatVector c50 = FloatVector.zero(SPECIES);
    FloatVector c51 = FloatVector.zero(SPECIES);
    for (int p = 0; p < kc; p++) {
      FloatVector b0 = FloatVector.fromArray(SPECIES, bp, bo);
      FloatVector b1 = FloatVector.fromArray(SPECIES, bp, bo + VL);
      FloatVector x = FloatVector.broadcast(SPECIES, ap[ao]);
      c00 = x.fma(b0, c00);
      c01 = x.fma(b1, c01);
      x = FloatVector.broadcast(SPECIES, ap[ao + 1]);
      c10 = x.fma(b0, c10);
      c11 = x.fma(b1, c11);
      x = FloatVector.broadcast(SPECIES, ap[ao + 2]);
      c20 = x.fma(b0, c20);
      c21 = x.fma(b1, c21);
      x = FloatVector.broadcast(SPECIES, ap[ao + 3]);
      c30 = x.fma(b0, c30);
      c31 = x.fma(b1, c31);
      x = FloatVector.broadcast(SPECIES, ap[ao + 4]);
      c40 = x.fma(b0, c40);
      c41 = x.fma(b1, c41);
      x = FloatVector.broadcast(SPECIES, ap[ao + 5]);
      c50 = x.fma(b0, c50);
      c51 = x.fma(b1, c51);
      ao += 6;
      bo += bStride;
    }
    c00.intoArray(tile, 0);
    c01.intoArray(tile, VL);
    c10.intoArray(tile, NR);
    c11.intoArray(tile, NR + VL);
    c20.intoArray(tile, 2 * NR);
    c21.intoArray(tile, 2 * NR + VL);
    c30.intoArray(tile, 3 * NR);
    c31.intoArray(tile, 3 * NR + VL);
    c40.intoArray(tile, 4 * NR);
    c41.intoArray(tile, 4 * NR + VL);
    c50.intoArray(tile, 5 * NR);
    c51.intoArray(tile, 5 * NR + VL);
  }
}
