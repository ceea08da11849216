package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import java.util.List;
import java.util.Map;

/** A resumed job's master state: as after a rollback to the checkpoint it resumed from. */
final class ResumedCheckpoint {
  private ResumedCheckpoint() {}

  /**
   * {@code s}, a job just submitted, with {@code from} committed and rolled back to: each task's
   * reader offset, the epochs done and the examples of the checkpoint.
   */
  static MasterState resume(MasterState s, JobProtocol.ResumePoint from) {
    for (JobProtocol.TaskOffset o : from.offsets()) s.openEpoch(o.epoch());
    s.checkpointCommitted(committed(from));
    return s.rolledBack(from.step(), 0);
  }

  /** {@code from} as the master's committed checkpoint; no trainer has a step of its own yet. */
  static MasterState.CommittedCheckpoint committed(JobProtocol.ResumePoint from) {
    List<MasterState.TaskOffset> offsets = from.offsets().stream()
        .map(o -> new MasterState.TaskOffset(o.epoch(), o.task(), o.offset())).toList();
    return new MasterState.CommittedCheckpoint(from.step(), from.dir(), offsets, from.epochsDone(), from.examples(),
        Map.of());
  }
}
