package io.shardtrain.compute.backend;

import jdk.incubator.vector.FloatVector;

/**
 * {@link VectorGemm}'s buffers for one thread, reused across calls: the packed panels of A and B,
 * the scratch tile its micro-kernels, {@link ShallowGemm} and {@link DotGemm} write, a transposed
 * operand (or {@link TransposedGemm}'s transposed product), and the partial products of a product
 * cut by depth, the caller's apart from the workers'. Each grows to the largest size asked for.
 */
final class GemmWorkspace {
  /** The packed panels of A, and a vector's slack for the spill of a transposed A's last panel. */
  final float[] ap = new float[VectorGemm.A_BLOCK + FloatVector.SPECIES_PREFERRED.length()];
  final float[] tile =
      new float[Math.max(Math.max(VectorGemm.MR_TALL * VectorGemm.NR, ShallowGemm.TILE), DotGemm.SCRATCH)];
  /** Where {@link RowGemm} finds kernels compiled for a shape; null for none (the warm-up's own products). */
  ShapeKernels shapeKernels = ShapeKernels.JVM;
  private float[] bp = new float[0];
  private float[] transposed = new float[0];
  private float[] depthScratch = new float[0];
  private float[] biasedBlocks = new float[0];

  /** The workers' partial products of a product cut by depth: written by the workers, read by every thread. */
  float[] depthScratch(int size) {
    if (depthScratch.length < size) {
      depthScratch = new float[size];
    }
    return depthScratch;
  }

  /**
   * The caller's blocks of a product cut by depth, started from a bias: apart from
   * {@link #depthScratch}, so that the caller never writes a line a worker wrote last.
   */
  float[] biasedBlocks(int size) {
    if (biasedBlocks.length < size) {
      biasedBlocks = new float[size];
    }
    return biasedBlocks;
  }

  float[] transposed(int size) {
    if (transposed.length < size) {
      transposed = new float[size];
    }
    return transposed;
  }

  /** The packed panels of B, or of {@link TransposedGemm}'s A. */
  float[] panels(int size) {
    if (bp.length < size) {
      bp = new float[size];
    }
    return bp;
  }
}
