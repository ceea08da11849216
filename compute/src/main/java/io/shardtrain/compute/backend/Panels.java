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
      if (!transA && rows == mr && mr == 12) {
        rows12(a, aOff + (ic + ir) * lda + pc, lda, alpha, kc, ap, base);
      } else if (!transA && rows == mr && mr == 8) {
        rows8(a, aOff + (ic + ir) * lda + pc, lda, alpha, kc, ap, base);
      } else if (!transA) {
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
   * Twelve rows of an untransposed A, {@code kc} deep from {@code src} ({@code lda} apart), into a
   * 12-row micro-panel at {@code base}: each step of depth one contiguous store of 12. With the
   * panel's stride a constant the JIT drops the range checks the general loop keeps, which took
   * several percent of a 1024^3 product (docs/BENCHMARKS.md, session 39).
   */
  private static void rows12(float[] a, int src, int lda, float alpha, int kc, float[] ap, int base) {
    int s0 = src, s1 = s0 + lda, s2 = s1 + lda, s3 = s2 + lda, s4 = s3 + lda, s5 = s4 + lda;
    int s6 = s5 + lda, s7 = s6 + lda, s8 = s7 + lda, s9 = s8 + lda, s10 = s9 + lda, s11 = s10 + lda;
    for (int p = 0, d = base; p < kc; p++, d += 12) {
      ap[d] = alpha * a[s0 + p];
      ap[d + 1] = alpha * a[s1 + p];
      ap[d + 2] = alpha * a[s2 + p];
      ap[d + 3] = alpha * a[s3 + p];
      ap[d + 4] = alpha * a[s4 + p];
      ap[d + 5] = alpha * a[s5 + p];
      ap[d + 6] = alpha * a[s6 + p];
      ap[d + 7] = alpha * a[s7 + p];
      ap[d + 8] = alpha * a[s8 + p];
      ap[d + 9] = alpha * a[s9 + p];
      ap[d + 10] = alpha * a[s10 + p];
      ap[d + 11] = alpha * a[s11 + p];
    }
  }

  /** {@link #rows12} for an 8-row micro-panel (a batch of 64's forward products). */
  private static void rows8(float[] a, int src, int lda, float alpha, int kc, float[] ap, int base) {
    int s0 = src, s1 = s0 + lda, s2 = s1 + lda, s3 = s2 + lda, s4 = s3 + lda, s5 = s4 + lda;
    int s6 = s5 + lda, s7 = s6 + lda;
    for (int p = 0, d = base; p < kc; p++, d += 8) {
      ap[d] = alpha * a[s0 + p];
      ap[d + 1] = alpha * a[s1 + p];
      ap[d + 2] = alpha * a[s2 + p];
      ap[d + 3] = alpha * a[s3 + p];
      ap[d + 4] = alpha * a[s4 + p];
      ap[d + 5] = alpha * a[s5 + p];
      ap[d + 6] = alpha * a[s6 + p];
      ap[d + 7] = alpha * a[s7 + p];
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
