package io.shardtrain.actors.trainer;

/**
 * When a step's parts ended, as {@link System#nanoTime()} readings: its compute started and ended
 * (both when the step without data began), its last push was acknowledged, and its last pulled
 * block was written into the model; and how long of its compute the thread was on a core.
 */
record StepTimes(long computeStarted, long computed, long computeCpuNanos, long pushesAcked, long pullsDone) {}
