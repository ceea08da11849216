package io.shardtrain.compute.optim;

/**
 * One gradient with the weight it carries in a weighted mean, e.g. a trainer's gradient weighted
 * by the examples behind it. A weight of 0 or less takes no part in the mean.
 */
public interface WeightedGradient {

  /** The weight of {@link #values()} in the mean. */
  float weight();

  /** The gradient; never changed by the mean. */
  float[] values();
}
