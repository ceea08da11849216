package io.shardtrain.actors.trainer;

import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;

/**
 * What a trainer's registration, and the rollbacks since, say: the job (and the trainer's model of
 * it), the membership epoch its pushes carry, the last step it reported (where an async trainer
 * continues) and the job's rollback generation, which its pushes and reports carry and by which
 * answers to requests of an abandoned timeline are told apart.
 */
record Session(JobSpec job, TrainerModel model, long membershipEpoch, long lastStep, long generation) {
  /** Whether steps are the job's (sync and all-reduce), rather than each trainer's own (async). */
  boolean lockstep() {
    return job.mode().lockstep();
  }

  boolean allReduce() {
    return job.mode() == BlockSpec.Mode.ALLREDUCE;
  }

  Session withGeneration(long newer) {
    return new Session(job, model, membershipEpoch, lastStep, newer);
  }
}
