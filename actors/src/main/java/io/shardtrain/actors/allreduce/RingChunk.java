package io.shardtrain.actors.allreduce;

/**
 * One message of a ring all-reduce: what a member sends the next member of the ring for bucket
 * {@code bucket} of step {@code step} in phase {@code phase} ({@link StepReduction}). In the
 * reduce-scatter phases {@code values} is a chunk's running sum of the members' gradients, each
 * weighted by its examples (empty while every member so far contributed nothing), and
 * {@code examples} and {@code leaving} the running sum and "or"; in the all-gather phases they
 * are a chunk's mean and the totals. {@code marks}: on the chunks of bucket 0 only, the task marks
 * of the members it passed ({@link StepReduction#marks()}), so every member learns where each
 * member's reader stood after the step; empty elsewhere.
 */
public record RingChunk(long step, int bucket, int phase, int examples, boolean leaving, float[] values,
    long[] marks) {
  public static final long[] NO_MARKS = new long[0];

  public RingChunk {
    if (marks == null) marks = NO_MARKS;
  }

  public RingChunk(long step, int bucket, int phase, int examples, boolean leaving, float[] values) {
    this(step, bucket, phase, examples, leaving, values, NO_MARKS);
  }
}
