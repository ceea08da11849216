package io.shardtrain.compute.optim;

/**
 * An update rule applied in place to one parameter block.
 *
 * <p>A block is any contiguous slice of a parameter: the whole parameter in single-process
 * training, one shard entity's slice on the parameter server. The optimizer keeps no state of its
 * own; the block's state arrays ("slots", each as long as the block) and its update count are
 * passed in, so one optimizer instance serves every block and a block's state can be persisted
 * and restored without it. {@link OptimizerState} bundles the slots and count of one block.
 * Implementations allocate nothing per call.
 */
public interface Optimizer {

  /** Short name for logs and reports, e.g. {@code adam}. */
  String name();

  /** How many state arrays, each as long as the block, {@link #apply} needs. */
  int slotCount();

  /**
   * Applies one update to {@code weights} in place.
   *
   * @param weights the block's values
   * @param grad the gradient for the block, same length
   * @param slots {@link #slotCount()} state arrays of the block's length, updated in place
   * @param step 1-based count of updates applied to this block, this one included
   * @param lr the learning rate for this update, already scheduled
   * @throws IllegalArgumentException when lengths or the slot count do not match, or step < 1
   */
  void apply(float[] weights, float[] grad, float[][] slots, long step, float lr);

  /**
   * Whether the update of a value reads only that value, its gradient and its slots, so that a
   * block may be updated in parts, on several threads ({@link #applyRange}). Not LARS, whose rate
   * depends on the norms of the whole block.
   */
  default boolean elementwise() {
    return false;
  }

  /**
   * As {@link #apply}, for the values {@code [from, to)} of the block only; only where
   * {@link #elementwise()}.
   *
   * @throws IllegalArgumentException as {@link #apply}, or when the range is not within the block
   * @throws UnsupportedOperationException when the optimizer updates a block only whole
   */
  default void applyRange(float[] weights, float[] grad, float[][] slots, long step, float lr, int from, int to) {
    throw new UnsupportedOperationException(name() + " updates a block only whole: it is not element-wise");
  }

  /**
   * Fresh state arrays for a block of {@code length} values, as this optimizer expects them
   * before the first update. Zeros unless the rule says otherwise (AdaGrad's initial accumulator).
   */
  default float[][] newSlots(int length) {
    if (length < 0) {
      throw new IllegalArgumentException("block length must be >= 0, not " + length);
    }
    return new float[slotCount()][length];
  }
}
