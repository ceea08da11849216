package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * How {@link VectorGemm} and {@link TransposedGemm} pack their operands into the panels their
 * kernels read contiguously: p-major, a tile's height or width of values for each step of depth.
 */
final class Panels {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  private static final int NR = VectorGemm.NR;

  private Panels() {}

  /** Packs alpha * op(A)[ic.., pc..] (mc x kc) into mr-row micro-panels, zero-padding rows. */
  static void packA(boolean transA, float[] a, int aOff, int lda, float alpha,
      int ic, int mc, int pc, int kc, int mr, float[] ap) {
    for (int ir = 0; ir < mc; ir += mr) {
      int rows = Math.min(mr, mc - ir);
      int base = ir * kc;
      if (!transA) {
        for (int r = 0; r < rows; r++) {
          int src = aOff + (ic + ir + r) * lda + pc;
          for (int p = 0, d = base + r; p < kc; p++, d += mr) {
            ap[d] = alpha * a[src + p];
          }
        }
      } else {
        // A vector of A's row for each p, mr of whose lanes are wanted: the rest land on the next
        // p's slot (or the next panel's, or the buffer's slack past the last) and are written over
        // by it, or by the zero padding below.
        for (int p = 0; p < kc; p++) {
          int src = aOff + (pc + p) * lda + ic + ir;
          int d = base + p * mr;
          if (mr <= VL && src + VL <= a.length) {
            scaledVector(a, src, alpha, ap, d);
          } else {
            for (int r = 0; r < rows; r++) {
              ap[d + r] = alpha * a[src + r];
            }
          }
        }
      }
      for (int r = rows; r < mr; r++) {
        for (int p = 0, d = base + r; p < kc; p++, d += mr) {
          ap[d] = 0f;
        }
      }
    }
  }

  /**
   * {@code dst[at..] = alpha * src[from..]}, one vector. A method of its own, called once a vector:
   * interpreted, a vector's load, multiply and store take about 25 µs, and this reaches the JIT's
   * tiers within the warm-up's first products, where its caller, called once a block, would take
   * most of the warm-up ({@link KernelWarmUp}).
   */
  private static void scaledVector(float[] src, int from, float alpha, float[] dst, int at) {
    FloatVector.fromArray(SPECIES, src, from).mul(alpha).intoArray(dst, at);
  }

  /** Packs op(B)[pc.., jc..] (kc x nc) into NR-column micro-panels, zero-padding columns. */
  static void packB(boolean transB, float[] b, int bOff, int ldb, int pc, int kc,
      int jc, int nc, float[] bp) {
    for (int jr = 0; jr < nc; jr += NR) {
      int cols = Math.min(NR, nc - jr);
      int base = jr * kc;
      if (transB) {
        transposed(b, bOff + (jc + jr) * ldb + pc, ldb, 1f, cols, kc, NR, bp, base);
        continue;
      }
      for (int p = 0; p < kc; p++) {
        int src = bOff + (pc + p) * ldb + jc + jr;
        int d = base + p * NR;
        if (cols == NR) {
          FloatVector.fromArray(SPECIES, b, src).intoArray(bp, d);
          FloatVector.fromArray(SPECIES, b, src + VL).intoArray(bp, d + VL);
        } else {
          System.arraycopy(b, src, bp, d, cols);
        }
      }
      if (cols < NR) {
        for (int p = 0; p < kc; p++) {
          int d = base + p * NR;
          for (int j = cols; j < NR; j++) {
            bp[d + j] = 0f;
          }
        }
      }
    }
  }

  /**
   * Packs {@code alpha} times {@code count} rows of {@code src} (from {@code off}, {@code ld}
   * apart), {@code kc} deep, transposed into a panel {@code width} wide at {@code base}:
   * {@code dst[base + p * width + j] = alpha * src[off + j * ld + p]}, zero for j from
   * {@code count} to {@code width}.
   */
  static void transposed(float[] src, int off, int ld, float alpha, int count, int kc, int width, float[] dst,
      int base) {
    for (int j = 0; j < count; j++) {
      for (int p = 0, s = off + j * ld, d = base + j; p < kc; p++, d += width) dst[d] = alpha * src[s + p];
    }
    for (int j = count; j < width; j++) {
      for (int p = 0, d = base + j; p < kc; p++, d += width) dst[d] = 0f;
    }
  }
}
