package io.shardtrain.actors.trainer;

import io.shardtrain.actors.allreduce.StepReduction;
import io.shardtrain.compute.data.Batch;

/** A step on its way round the ring: kept whole until applied, so a new ring can take it again. */
final class RingStep {
  final long step;
  final Batch batch;
  final boolean leaving;
  StepReduction reduction;
  float loss;
  long computeStarted;
  long computed;
  long computeCpu;
  boolean stopRequested;

  RingStep(long step, Batch batch, boolean leaving) {
    this.step = step;
    this.batch = batch;
    this.leaving = leaving;
  }

  int examples() {
    return batch == null ? 0 : batch.size();
  }
}
