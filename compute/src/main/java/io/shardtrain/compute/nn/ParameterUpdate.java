package io.shardtrain.compute.nn;

/**
 * An optimizer's update of a model's parameters, applied by a step where each parameter's gradient
 * is ready ({@link GradientStep#forwardBackwardUpdate}), a block at a time, so that a step run by
 * several threads updates each block on the thread that computed its gradient, whose cache holds it.
 */
@FunctionalInterface
public interface ParameterUpdate {
  /**
   * Updates rows {@code [r0, r1)} by columns {@code [c0, c1)} of parameter {@code index}
   * ({@link Mlp#parameters} order; a bias is one row) from their gradient, which is final. Calls
   * for disjoint blocks may run at once, on different threads.
   */
  void block(int index, int r0, int r1, int c0, int c1);
}
