package io.shardtrain.compute.backend;

import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code C = alpha * A B^T + beta * C} for an A of few rows: a layer's input gradient
 * {@code g W^T}, g a batch of output gradients (m x k), W the weights (n x k, in x out).
 *
 * <p>The tiles ({@link VectorGemm}) pack all of W transposed, a scalar load and store per weight,
 * a third of such a product's time. This path computes the transpose instead,
 * {@code C^T = W (alpha g)^T}: the micro-kernel broadcasts W's elements from W's own rows, so
 * only the small g is packed (transposed, into panels of {@link #PANEL} rows), the tiles of
 * {@code C^T} go to a scratch matrix by whole vectors, and each depth block's {@code C^T} is added
 * to C row by row, down the scratch's columns. It takes products where g has fewer rows (times
 * depth blocks) than the depth, so that these transposes move fewer values than W's would,
 * and rows that fill whole panels, padded by at most a fifth ({@link #takes}).
 *
 * <p>The tiles' bits: each element of C is the same products (alpha applied to g's element),
 * summed over the depth block in order from zero, the blocks added to C in order.
 */
final class TransposedGemm {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  /** Rows of A in a packed panel: four vectors, a tile's width. */
  static final int PANEL = 4 * VL;
  /** Rows of B in a tile: 4 x 4 accumulators, half the 32 AVX-512 vector registers. */
  static final int ROWS = 4;
  /** Floats added to each row of the scratch {@code C^T}: one 64-byte cache line. */
  private static final int SCRATCH_PAD = 16;

  private TransposedGemm() {}

  /**
   * Whether this path takes the product: {@code A B^T} with AVX-512 (on 16 registers the
   * accumulators would not fit), fewer rows of A times depth blocks than depth, and A's rows
   * padded to whole panels by at most a fifth.
   */
  static boolean takes(boolean transA, boolean transB, int m, int n, int k) {
    int padding = VectorGemm.roundUp(m, PANEL) - m;
    return !transA && transB && VL >= 16 && n >= ROWS && (long) m * DepthBlocks.count(k) < k
        && padding * 5 <= m;
  }

  static void gemm(GemmWorkspace ws, int m, int n, int k, float alpha, float[] a, int aOff, int lda, float[] b,
      int bOff, int ldb, float beta, float[] c, int cOff, int ldc) {
    int mp = VectorGemm.roundUp(m, PANEL);
    int depth = DepthBlocks.block(k);
    int fullRows = n / ROWS * ROWS;
    // The packed panels of A, then room for B's last rows padded to a tile.
    float[] ap = ws.panels(mp * depth + ROWS * depth);
    int edge = mp * depth;
    // C^T's rows one cache line longer than the panels: at a multiple of 256 bytes apart, the
    // merge's reads down a column of C^T would fall in a quarter of L1's sets and miss.
    int ldt = mp + SCRATCH_PAD;
    float[] ct = ws.transposed(VectorGemm.roundUp(n, ROWS) * ldt);
    for (int pc = 0; pc < k; pc += depth) {
      int kc = Math.min(depth, k - pc);
      // Panel q: for each p, alpha times rows q..q+PANEL-1 of A (zero past m).
      for (int q = 0; q < m; q += PANEL) {
        Panels.transposed(a, aOff + q * lda + pc, lda, alpha, Math.min(PANEL, m - q), kc, PANEL, ap, q * kc);
      }
      for (int jr = 0; jr < n; jr += ROWS) {
        float[] rb = b;
        int ro = bOff + jr * ldb + pc;
        int rld = ldb;
        if (jr >= fullRows) {
          Arrays.fill(ap, edge, edge + ROWS * kc, 0f);
          for (int r = 0; r < n - jr; r++) System.arraycopy(b, ro + r * ldb, ap, edge + r * kc, kc);
          rb = ap;
          ro = edge;
          rld = kc;
        }
        for (int q = 0; q < mp; q += PANEL) kernel(rb, ro, rld, ap, q * kc, kc, ct, jr * ldt + q, ldt);
      }
      // beta applies once; later depth blocks accumulate onto what the first one wrote.
      Merges.transposed(ct, ldt, m, n, c, cOff, ldc, pc == 0 ? beta : 1f);
    }
  }

  /**
   * The ROWS x PANEL tile of {@code C^T}: rows of B from {@code b0}, {@code ldb} apart, times the
   * packed panel from {@code ao}, stored at {@code o} of the scratch {@code C^T}, rows {@code ld}
   * apart (which has room for a last tile's rows past B's).
   */
  private static void kernel(float[] b, int b0, int ldb, float[] ap, int ao, int kc, float[] ct, int o, int ld) {
    int b1 = b0 + ldb, b2 = b1 + ldb, b3 = b2 + ldb;
    FloatVector c00 = FloatVector.zero(SPECIES), c01 = c00, c02 = c00, c03 = c00;
    FloatVector c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    FloatVector c20 = c00, c21 = c00, c22 = c00, c23 = c00;
    FloatVector c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    for (int p = 0; p < kc; p++, ao += PANEL) {
      FloatVector y0 = FloatVector.fromArray(SPECIES, ap, ao);
      FloatVector y1 = FloatVector.fromArray(SPECIES, ap, ao + VL);
      FloatVector y2 = FloatVector.fromArray(SPECIES, ap, ao + 2 * VL);
      FloatVector y3 = FloatVector.fromArray(SPECIES, ap, ao + 3 * VL);
      FloatVector x = FloatVector.broadcast(SPECIES, b[b0 + p]);
      c00 = x.fma(y0, c00);
      c01 = x.fma(y1, c01);
      c02 = x.fma(y2, c02);
      c03 = x.fma(y3, c03);
      x = FloatVector.broadcast(SPECIES, b[b1 + p]);
      c10 = x.fma(y0, c10);
      c11 = x.fma(y1, c11);
      c12 = x.fma(y2, c12);
      c13 = x.fma(y3, c13);
      x = FloatVector.broadcast(SPECIES, b[b2 + p]);
      c20 = x.fma(y0, c20);
      c21 = x.fma(y1, c21);
      c22 = x.fma(y2, c22);
      c23 = x.fma(y3, c23);
      x = FloatVector.broadcast(SPECIES, b[b3 + p]);
      c30 = x.fma(y0, c30);
      c31 = x.fma(y1, c31);
      c32 = x.fma(y2, c32);
      c33 = x.fma(y3, c33);
    }
    c00.intoArray(ct, o);
    c01.intoArray(ct, o + VL);
    c02.intoArray(ct, o + 2 * VL);
    c03.intoArray(ct, o + 3 * VL);
    c10.intoArray(ct, o + ld);
    c11.intoArray(ct, o + ld + VL);
    c12.intoArray(ct, o + ld + 2 * VL);
    c13.intoArray(ct, o + ld + 3 * VL);
    c20.intoArray(ct, o + 2 * ld);
    c21.intoArray(ct, o + 2 * ld + VL);
    c22.intoArray(ct, o + 2 * ld + 2 * VL);
    c23.intoArray(ct, o + 2 * ld + 3 * VL);
    c30.intoArray(ct, o + 3 * ld);
    c31.intoArray(ct, o + 3 * ld + VL);
    c32.intoArray(ct, o + 3 * ld + 2 * VL);
    c33.intoArray(ct, o + 3 * ld + 3 * VL);
  }
}
