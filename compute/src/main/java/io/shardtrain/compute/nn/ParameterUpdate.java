package io.shardtrain.compute.nn;

/** Updates a parameter's values from its gradient, a range at a time ({@link GradientStep#forwardBackwardUpdate}). */
@FunctionalInterface
public interface ParameterUpdate {

  /**
   * Updates values {@code [from, to)} of {@code p} (offsets into its data) from its gradient. Ranges
   * of one parameter may run on several threads at once; each value once a step.
   */
  void range(Parameter p, int from, int to);
}
