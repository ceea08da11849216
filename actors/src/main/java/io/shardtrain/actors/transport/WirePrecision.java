package io.shardtrain.actors.transport;

import com.typesafe.config.Config;
import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * How floats travel on the wire: as fp32 (4 bytes, bit-exact) or bf16 (2 bytes, rounded to nearest
 * even by {@link Bf16}). Every frame and message that carries floats names its precision, so a
 * receiver never guesses; receivers always decode to fp32.
 */
public enum WirePrecision {
  FP32(Float.BYTES),
  BF16(Short.BYTES);

  /** The key that chooses the precision of gradient pushes; parameters always travel as fp32. */
  public static final String GRADIENT_KEY = "shardtrain.transport.gradient-precision";

  private final int bytesPerValue;

  WirePrecision(int bytesPerValue) {
    this.bytesPerValue = bytesPerValue;
  }

  public int bytesPerValue() {
    return bytesPerValue;
  }

  /** The setting's name for it: {@code fp32} or {@code bf16}. */
  public String setting() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads {@value #GRADIENT_KEY}. */
  public static WirePrecision gradientsFromConfig(Config config) {
    return parse(config.getString(GRADIENT_KEY), GRADIENT_KEY);
  }

  /** {@code value} (fp32 or bf16, any case); else an error naming {@code key} and the accepted values. */
  public static WirePrecision parse(String value, String key) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "fp32" -> FP32;
      case "bf16" -> BF16;
      default -> throw new IllegalArgumentException(key + " must be fp32 or bf16, not '" + value + "'");
    };
  }

  /** The wire byte of this precision (its ordinal, which is therefore part of the wire format). */
  public byte code() {
    return (byte) ordinal();
  }

  public static WirePrecision ofCode(byte code) {
    if (code < 0 || code >= values().length) {
      throw new IllegalArgumentException("unknown wire precision byte " + code);
    }
    return values()[code];
  }

  /** Writes {@code n} values from {@code src[offset]} into {@code buf} (room for them), in this precision. */
  public void put(ByteBuffer buf, float[] src, int offset, int n) {
    if (this == FP32) {
      buf.asFloatBuffer().put(src, offset, n);
      buf.position(buf.position() + n * Float.BYTES);
    } else {
      Bf16.put(buf, src, offset, n);
    }
  }

  /** Reads {@code n} values of this precision from {@code buf} into {@code dst[offset]}, as fp32. */
  public void get(ByteBuffer buf, float[] dst, int offset, int n) {
    if (this == FP32) {
      buf.asFloatBuffer().get(dst, offset, n);
      buf.position(buf.position() + n * Float.BYTES);
    } else {
      Bf16.get(buf, dst, offset, n);
    }
  }
}
