package io.shardtrain.compute.nn;

/**
 * A backend that can keep an {@link Mlp} in its device's memory between steps (the CUDA
 * backend), so a training step moves only the batch in and the gradients out instead of every
 * operation's operands.
 */
public interface ResidentMlpBackend {
  /** A resident copy of {@code model} for batches of up to {@code maxBatch} rows. */
  GradientStep residentStep(Mlp model, int maxBatch);
}
