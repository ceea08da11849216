package io.shardtrain.compute.backend;

/**
 * How {@link VectorGemm} cuts a product's depth, and a dense layer's weight rows, into blocks:
 * equal blocks of at most {@link VectorGemm#KC}, so that 784 is four blocks of 196 rather than three
 * of 256 and one of 16, and a dimension splits evenly across threads in whole blocks. Products of
 * many rows cut their depth into blocks of at most {@link VectorGemm#KC_PACKED} ({@link #block(int, int)}).
 */
final class DepthBlocks {
  private DepthBlocks() {}

  /** Length of the blocks a dimension of {@code dim} is cut into. */
  static int block(int dim) {
    return block(dim, VectorGemm.KC);
  }

  /** Length of the equal blocks of at most {@code max} a dimension of {@code dim} is cut into. */
  static int block(int dim, int max) {
    return dim <= max ? Math.max(dim, 1) : ceilDiv(dim, ceilDiv(dim, max));
  }

  /** How many blocks a dimension of {@code dim} is cut into. */
  static int count(int dim) {
    return ceilDiv(dim, block(dim));
  }

  /** Where part {@code part} of {@code parts} starts, whole blocks each; {@code start(dim, parts, parts) == dim}. */
  static int start(int dim, int part, int parts) {
    return Math.min(dim, (int) ((long) part * count(dim) / parts) * block(dim));
  }

  private static int ceilDiv(int x, int y) {
    return (x + y - 1) / y;
  }
}
