package io.shardtrain.actors.transport;

import java.nio.ByteBuffer;

/**
 * bfloat16: the upper 16 bits of an fp32 (sign, the same 8-bit exponent, 7 mantissa bits), so it
 * keeps fp32's range and loses precision only. Encoding rounds to nearest, ties to even; NaN stays
 * NaN (quiet, sign kept) and the infinities and signed zeros stay what they are; a finite value
 * that rounds past the largest bf16 becomes an infinity, as IEEE rounding says. Decoding is exact.
 */
public final class Bf16 {
  private Bf16() {}

  /** {@code f} rounded to nearest even, as bf16 bits. */
  public static short encode(float f) {
    int bits = Float.floatToRawIntBits(f);
    // Rounding could carry a NaN whose payload sits in the low bits into an infinity: keep it a NaN.
    if ((bits & 0x7FFF_FFFF) > 0x7F80_0000) return (short) ((bits >>> 16) | 0x0040);
    int lsb = (bits >>> 16) & 1;
    return (short) ((bits + 0x7FFF + lsb) >>> 16);
  }

  /** The fp32 value of bf16 bits {@code h}: exact. */
  public static float decode(short h) {
    return Float.intBitsToFloat((h & 0xFFFF) << 16);
  }

  /** {@code f} rounded to the nearest bf16, as an fp32. */
  public static float round(float f) {
    return decode(encode(f));
  }

  /** Encodes {@code n} values from {@code src[offset]} into {@code buf}, 2 bytes each, in its byte order. */
  static void put(ByteBuffer buf, float[] src, int offset, int n) {
    for (int i = offset, end = offset + n; i < end; i++) buf.putShort(encode(src[i]));
  }

  /** Decodes {@code n} bf16 values from {@code buf} into {@code dst[offset]}. */
  static void get(ByteBuffer buf, float[] dst, int offset, int n) {
    for (int i = offset, end = offset + n; i < end; i++) dst[i] = decode(buf.getShort());
  }
}
