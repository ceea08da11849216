package io.shardtrain.compute.backend;

/**
 * {@link VectorGemm}'s buffers for one thread, reused across calls: the packed panels of A and B,
 * the scratch tile its micro-kernels and {@link ShallowGemm} write, a transposed operand, and the
 * partial products of a product cut by depth. Each grows to the largest size asked for.
 */
final class GemmWorkspace {
  final float[] ap = new float[VectorGemm.MC * VectorGemm.KC];
  final float[] tile = new float[Math.max(VectorGemm.MR_TALL * VectorGemm.NR, ShallowGemm.TILE)];
  private float[] bp = new float[0];
  private float[] transposed = new float[0];
  private float[] depthScratch = new float[0];

  float[] depthScratch(int size) {
    if (depthScratch.length < size) {
      depthScratch = new float[size];
    }
    return depthScratch;
  }

  float[] transposed(int size) {
    if (transposed.length < size) {
      transposed = new float[size];
    }
    return transposed;
  }

  float[] bPanel(int size) {
    if (bp.length < size) {
      bp = new float[size];
    }
    return bp;
  }
}
