package io.shardtrain.compute.sparse;

import java.util.Locale;

/**
 * How a row's values start: a function of (table seed, row id, column) only, so a row created on
 * any node, after any number of evictions, or pulled before it exists starts from the same floats.
 * {@code UNIFORM} draws from [-scale, scale), {@code NORMAL} from N(0, scale^2) (Box-Muller with
 * {@link StrictMath}, whose results do not depend on the JIT), {@code ZERO} is all zeros.
 */
public record RowInit(Kind kind, float scale, long seed) {

  /** The distributions there are. */
  public enum Kind { ZERO, UNIFORM, NORMAL }

  public RowInit {
    if (kind == null) throw new IllegalArgumentException("row initializer kind must not be null");
    if (!(scale >= 0f) || Float.isInfinite(scale)) {
      throw new IllegalArgumentException("row initializer scale must be finite and >= 0, not " + scale);
    }
  }

  /** {@code UNIFORM}, {@code NORMAL} or {@code ZERO}, case-insensitive. */
  public static Kind kind(String name) {
    try {
      return Kind.valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("row initializer must be zero, uniform or normal, not '" + name + "'");
    }
  }

  /** Writes row {@code id}'s initial {@code dim} values into {@code dst} from {@code offset}. */
  public void fill(long id, float[] dst, int offset, int dim) {
    if (kind == Kind.ZERO) {
      java.util.Arrays.fill(dst, offset, offset + dim, 0f);
      return;
    }
    long base = RowHash.mix(seed ^ RowHash.mix(id));
    for (int j = 0; j < dim; j++) {
      long bits = RowHash.mix(base + 0x9e3779b97f4a7c15L * (j + 1));
      double u = (bits >>> 11) * 0x1.0p-53;
      if (kind == Kind.UNIFORM) {
        dst[offset + j] = (float) ((2 * u - 1) * scale);
      } else {
        double u2 = (RowHash.mix(bits) >>> 11) * 0x1.0p-53;
        double r = StrictMath.sqrt(-2 * StrictMath.log(1 - u));
        dst[offset + j] = (float) (r * StrictMath.cos(2 * StrictMath.PI * u2) * scale);
      }
    }
  }
}
