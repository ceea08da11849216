package io.shardtrain.compute.nn;

/**
 * An optimizer's update of a model's parameters, applied by a step where each parameter's gradient
 * is ready ({@link GradientStep#forwardBackwardUpdate}), rows at a time, so that a step run by
 * several threads updates each row on the thread that computed its gradient, whose cache holds it.
 */
@FunctionalInterface
public interface ParameterUpdate {
  /**
   * Updates rows {@code [from, to)} of parameter {@code index} ({@link Mlp#parameters} order; a
   * bias is one row) from their gradient, which is final. Calls for disjoint rows may run at once,
   * on different threads.
   */
  void rows(int index, int from, int to);
}
