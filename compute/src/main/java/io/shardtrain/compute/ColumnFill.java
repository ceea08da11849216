package io.shardtrain.compute;

/**
 * Writes columns {@code [from, to)} of a batch's features into the input a step reads them from:
 * the batch's copy left to the step, so that a step run by several threads has each write the
 * columns it reads, and none of them crosses between cores ({@code GradientStep.forwardBackward}).
 */
@FunctionalInterface
public interface ColumnFill {

  void columns(int from, int to);
}
