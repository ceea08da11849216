package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import java.util.List;
import java.util.Map;

/** The committed checkpoint a resumed job's master starts with: the one it resumed from. */
final class ResumedCheckpoint {
  private ResumedCheckpoint() {}

  /** {@code from} as the master's committed checkpoint; no trainer has a step of its own yet. */
  static MasterState.CommittedCheckpoint committed(JobProtocol.ResumePoint from) {
    List<MasterState.TaskOffset> offsets = from.offsets().stream()
        .map(o -> new MasterState.TaskOffset(o.epoch(), o.task(), o.offset())).toList();
    return new MasterState.CommittedCheckpoint(from.step(), from.dir(), offsets, from.epochsDone(), from.examples(),
        Map.of());
  }
}
