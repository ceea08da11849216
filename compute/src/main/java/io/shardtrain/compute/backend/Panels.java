package io.shardtrain.compute.backend;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * How {@link VectorGemm} and {@link TransposedGemm} pack their operands into the panels their
 * kernels read contiguously: p-major, a tile's height or width of values for each step of depth.
 */
final class Panels {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
  private static final int VL = SPECIES.length();
  private static final int NR = VectorGemm.NR;
  private static final int MR_TALL = VectorGemm.MR_TALL;
  /**
   * The lane moves of a 16 x 16 transpose in four rounds ({@link #transposed16}): in round {@code d}
   * (8, 4, 2, 1) lane j takes lane {@code j - d} or {@code j + d} of the other vector of its pair.
   */
  private static final VectorShuffle<Float> UP8 = lanesFrom(-8), UP4 = lanesFrom(-4), UP2 = lanesFrom(-2),
      UP1 = lanesFrom(-1), DOWN8 = lanesFrom(8), DOWN4 = lanesFrom(4), DOWN2 = lanesFrom(2), DOWN1 = lanesFrom(1);
  /** The lanes whose index has bit d set, for the rounds above. */
  private static final VectorMask<Float> BIT8 = lanesWithBit(8), BIT4 = lanesWithBit(4), BIT2 = lanesWithBit(2),
      BIT1 = lanesWithBit(1);

  private Panels() {}

  private static VectorShuffle<Float> lanesFrom(int shift) {
    return VectorShuffle.fromOp(SPECIES, j -> (j + shift) & (VL - 1));
  }

  private static VectorMask<Float> lanesWithBit(int bit) {
    long bits = 0;
    for (int j = 0; j < VL; j++) if ((j & bit) != 0) bits |= 1L << j;
    return VectorMask.fromLong(SPECIES, bits);
  }

  /**
   * Whether {@link #transposed16} is compiled by the JIT's second tier and may pack. Interpreted,
   * and at the first tier, whose vector operations each allocate, it made a product's first calls
   * many times slower than the scalar copy, and then twice as slow until the second tier had it:
   * about a second of a core. So the first caller starts a daemon thread that calls it until a
   * call is fast ({@link #compileVectorPack}), and until then the scalar copy packs: the same
   * floats, so nothing but the time depends on which.
   */
  private static volatile boolean vectorPackCompiled;
  private static final AtomicBoolean VECTOR_PACK_STARTED = new AtomicBoolean();
  /** A compiled call takes tens of nanoseconds, one at the first tier microseconds. */
  private static final long COMPILED_CALL_NANOS = 500;

  /** Whether {@link #packA} may transpose with vectors; the first call starts compiling them. */
  static boolean vectorPackReady() {
    if (vectorPackCompiled) return true;
    if (VL == 16 && VECTOR_PACK_STARTED.compareAndSet(false, true)) {
      Thread t = new Thread(Panels::compileVectorPack, "shardtrain-pack-warm-up");
      t.setDaemon(true);
      t.start();
    }
    return false;
  }

  /**
   * Calls {@link #transposed16} in rounds of 100 until a round takes under
   * {@link #COMPILED_CALL_NANOS} a call, resting between rounds so the JIT's threads have the
   * cores; gives up after a minute (a JVM without the second tier packs with the scalar copy).
   */
  private static void compileVectorPack() {
    float[] a = new float[VL * VL];
    float[] p = new float[VL * VL + VL];
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    try {
      while (System.nanoTime() < deadline) {
        long t0 = System.nanoTime();
        for (int i = 0; i < 100; i++) transposed16(a, 0, VL, 1f, MR_TALL, p, 0, MR_TALL);
        if ((System.nanoTime() - t0) / 100 < COMPILED_CALL_NANOS) {
          vectorPackCompiled = true;
          return;
        }
        Thread.sleep(5);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Packs alpha * op(A)[ic.., pc..] (mc x kc) into mr-row micro-panels, zero-padding rows. With
   * {@code vector} and 16-lane vectors, an untransposed A's full panels are transposed 16 steps of
   * depth at a time in registers ({@link #transposed16}) rather than value by value: the same
   * floats in far fewer instructions. {@link VectorGemm} asks for that where B is packed (the
   * square product's scalar copy of A took about a twentieth of its time) once {@link #vectorPackReady}.
   */
  static void packA(boolean transA, float[] a, int aOff, int lda, float alpha,
      int ic, int mc, int pc, int kc, int mr, float[] ap, boolean vector) {
    for (int ir = 0; ir < mc; ir += mr) {
      int rows = Math.min(mr, mc - ir);
      int base = ir * kc;
      if (!transA) {
        int p0 = 0;
        if (vector && VL == 16 && rows == mr && mr <= VL) {
          int src = aOff + (ic + ir) * lda + pc;
          // Each call's last vector writes lanes past mr into the next step's slot (or the next
          // panel's, or the buffer's slack), which the next call, the tail or the next panel writes over.
          for (; p0 + VL <= kc; p0 += VL) transposed16(a, src + p0, lda, alpha, mr, ap, base + p0 * mr, mr);
        }
        for (int r = 0; r < rows; r++) {
          int src = aOff + (ic + ir + r) * lda + pc;
          for (int p = p0, d = base + p0 * mr + r; p < kc; p++, d += mr) {
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
   * {@code dst[d + p * width + r] = alpha * a[src + r * lda + p]} for r below {@code rows} (at most
   * 16) and p from 0 to 15; lanes {@code rows} to 15 of each step get arbitrary values. Rows are
   * read as vectors and transposed in four rounds, each swapping the halves of lane blocks
   * between pairs of vectors.
   */
  static void transposed16(float[] a, int src, int lda, float alpha, int rows, float[] dst, int d,
      int width) {
    FloatVector v0 = row(a, src, 0, lda, alpha, rows), v1 = row(a, src, 1, lda, alpha, rows);
    FloatVector v2 = row(a, src, 2, lda, alpha, rows), v3 = row(a, src, 3, lda, alpha, rows);
    FloatVector v4 = row(a, src, 4, lda, alpha, rows), v5 = row(a, src, 5, lda, alpha, rows);
    FloatVector v6 = row(a, src, 6, lda, alpha, rows), v7 = row(a, src, 7, lda, alpha, rows);
    FloatVector v8 = row(a, src, 8, lda, alpha, rows), v9 = row(a, src, 9, lda, alpha, rows);
    FloatVector v10 = row(a, src, 10, lda, alpha, rows), v11 = row(a, src, 11, lda, alpha, rows);
    FloatVector v12 = row(a, src, 12, lda, alpha, rows), v13 = row(a, src, 13, lda, alpha, rows);
    FloatVector v14 = row(a, src, 14, lda, alpha, rows), v15 = row(a, src, 15, lda, alpha, rows);
    FloatVector t;
    t = v0.blend(v8.rearrange(UP8), BIT8); v8 = v0.rearrange(DOWN8).blend(v8, BIT8); v0 = t;
    t = v1.blend(v9.rearrange(UP8), BIT8); v9 = v1.rearrange(DOWN8).blend(v9, BIT8); v1 = t;
    t = v2.blend(v10.rearrange(UP8), BIT8); v10 = v2.rearrange(DOWN8).blend(v10, BIT8); v2 = t;
    t = v3.blend(v11.rearrange(UP8), BIT8); v11 = v3.rearrange(DOWN8).blend(v11, BIT8); v3 = t;
    t = v4.blend(v12.rearrange(UP8), BIT8); v12 = v4.rearrange(DOWN8).blend(v12, BIT8); v4 = t;
    t = v5.blend(v13.rearrange(UP8), BIT8); v13 = v5.rearrange(DOWN8).blend(v13, BIT8); v5 = t;
    t = v6.blend(v14.rearrange(UP8), BIT8); v14 = v6.rearrange(DOWN8).blend(v14, BIT8); v6 = t;
    t = v7.blend(v15.rearrange(UP8), BIT8); v15 = v7.rearrange(DOWN8).blend(v15, BIT8); v7 = t;
    t = v0.blend(v4.rearrange(UP4), BIT4); v4 = v0.rearrange(DOWN4).blend(v4, BIT4); v0 = t;
    t = v1.blend(v5.rearrange(UP4), BIT4); v5 = v1.rearrange(DOWN4).blend(v5, BIT4); v1 = t;
    t = v2.blend(v6.rearrange(UP4), BIT4); v6 = v2.rearrange(DOWN4).blend(v6, BIT4); v2 = t;
    t = v3.blend(v7.rearrange(UP4), BIT4); v7 = v3.rearrange(DOWN4).blend(v7, BIT4); v3 = t;
    t = v8.blend(v12.rearrange(UP4), BIT4); v12 = v8.rearrange(DOWN4).blend(v12, BIT4); v8 = t;
    t = v9.blend(v13.rearrange(UP4), BIT4); v13 = v9.rearrange(DOWN4).blend(v13, BIT4); v9 = t;
    t = v10.blend(v14.rearrange(UP4), BIT4); v14 = v10.rearrange(DOWN4).blend(v14, BIT4); v10 = t;
    t = v11.blend(v15.rearrange(UP4), BIT4); v15 = v11.rearrange(DOWN4).blend(v15, BIT4); v11 = t;
    t = v0.blend(v2.rearrange(UP2), BIT2); v2 = v0.rearrange(DOWN2).blend(v2, BIT2); v0 = t;
    t = v1.blend(v3.rearrange(UP2), BIT2); v3 = v1.rearrange(DOWN2).blend(v3, BIT2); v1 = t;
    t = v4.blend(v6.rearrange(UP2), BIT2); v6 = v4.rearrange(DOWN2).blend(v6, BIT2); v4 = t;
    t = v5.blend(v7.rearrange(UP2), BIT2); v7 = v5.rearrange(DOWN2).blend(v7, BIT2); v5 = t;
    t = v8.blend(v10.rearrange(UP2), BIT2); v10 = v8.rearrange(DOWN2).blend(v10, BIT2); v8 = t;
    t = v9.blend(v11.rearrange(UP2), BIT2); v11 = v9.rearrange(DOWN2).blend(v11, BIT2); v9 = t;
    t = v12.blend(v14.rearrange(UP2), BIT2); v14 = v12.rearrange(DOWN2).blend(v14, BIT2); v12 = t;
    t = v13.blend(v15.rearrange(UP2), BIT2); v15 = v13.rearrange(DOWN2).blend(v15, BIT2); v13 = t;
    t = v0.blend(v1.rearrange(UP1), BIT1); v1 = v0.rearrange(DOWN1).blend(v1, BIT1); v0 = t;
    t = v2.blend(v3.rearrange(UP1), BIT1); v3 = v2.rearrange(DOWN1).blend(v3, BIT1); v2 = t;
    t = v4.blend(v5.rearrange(UP1), BIT1); v5 = v4.rearrange(DOWN1).blend(v5, BIT1); v4 = t;
    t = v6.blend(v7.rearrange(UP1), BIT1); v7 = v6.rearrange(DOWN1).blend(v7, BIT1); v6 = t;
    t = v8.blend(v9.rearrange(UP1), BIT1); v9 = v8.rearrange(DOWN1).blend(v9, BIT1); v8 = t;
    t = v10.blend(v11.rearrange(UP1), BIT1); v11 = v10.rearrange(DOWN1).blend(v11, BIT1); v10 = t;
    t = v12.blend(v13.rearrange(UP1), BIT1); v13 = v12.rearrange(DOWN1).blend(v13, BIT1); v12 = t;
    t = v14.blend(v15.rearrange(UP1), BIT1); v15 = v14.rearrange(DOWN1).blend(v15, BIT1); v14 = t;
    v0.intoArray(dst, d);
    v1.intoArray(dst, d + width);
    v2.intoArray(dst, d + 2 * width);
    v3.intoArray(dst, d + 3 * width);
    v4.intoArray(dst, d + 4 * width);
    v5.intoArray(dst, d + 5 * width);
    v6.intoArray(dst, d + 6 * width);
    v7.intoArray(dst, d + 7 * width);
    v8.intoArray(dst, d + 8 * width);
    v9.intoArray(dst, d + 9 * width);
    v10.intoArray(dst, d + 10 * width);
    v11.intoArray(dst, d + 11 * width);
    v12.intoArray(dst, d + 12 * width);
    v13.intoArray(dst, d + 13 * width);
    v14.intoArray(dst, d + 14 * width);
    v15.intoArray(dst, d + 15 * width);
  }

  /** Row {@code r} of a {@link #transposed16} block, scaled; row 0 again for a row past {@code rows}. */
  private static FloatVector row(float[] a, int src, int r, int lda, float alpha, int rows) {
    return FloatVector.fromArray(SPECIES, a, src + (r < rows ? r : 0) * lda).mul(alpha);
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
