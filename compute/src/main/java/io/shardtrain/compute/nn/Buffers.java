package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;

/** Reuse of activation and gradient buffers across steps; a new one only when the shape changes. */
final class Buffers {
  private Buffers() {}

  static Tensor ensure(Tensor buffer, int... shape) {
    if (buffer != null && buffer.rank() == shape.length) {
      boolean same = true;
      for (int i = 0; i < shape.length && same; i++) same = buffer.dim(i) == shape[i];
      if (same) return buffer;
    }
    return Tensor.zeros(shape);
  }

  static Tensor ensureLike(Tensor buffer, Tensor like) {
    if (buffer != null && buffer.sameShape(like)) return buffer;
    return Tensor.zeros(like.shape());
  }

  static void requireForward(Object kept, String layer) {
    if (kept == null) {
      throw new IllegalStateException(layer + ": backward called before forward");
    }
  }
}
