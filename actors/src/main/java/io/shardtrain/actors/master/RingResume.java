package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * All-reduce jobs' checkpoints, and their resumption once every trainer is gone. The ring's first
 * member writes the replica as of a step ({@link JobProtocol.RingCheckpointed}); the master's part
 * of that checkpoint is each task's reader offset at that step: the offset reported for a step up
 * to it, or further where a member's task mark says the ring applied more (a member reports a step
 * only once the ring applied the next). When the last trainer of a running all-reduce job leaves
 * (or its only member registers again, a new actor), the master rolls back to that checkpoint under
 * a new generation, and the trainers that join next take up the replica written with it: the
 * examples applied after it are trained again, none twice.
 */
final class RingResume {
  private RingResume() {}

  /** The checkpoint {@code c} commits; none when it is of another generation, or not newer than the last one. */
  static Optional<MasterState.CommittedCheckpoint> committed(MasterState s, JobProtocol.RingCheckpointed c) {
    if (!allReduce(s) || c.generation() != s.generation()) return Optional.empty();
    if (s.checkpoint() != null && s.checkpoint().step() >= c.step()) return Optional.empty();
    MasterState.CommittedCheckpoint reported = s.checkpointAt(c.step(), c.dir());
    List<MasterState.TaskOffset> offsets = new ArrayList<>();
    long examples = reported.examples();
    int unfinished = Integer.MAX_VALUE;
    int newestEpoch = -1;
    for (MasterState.TaskOffset o : reported.offsets()) {
      TaskState t = s.task(o.epoch(), o.task());
      long offset = o.offset();
      for (JobProtocol.RingMark m : c.marks()) {
        if (m.epoch() == o.epoch() && m.task() == o.task() && m.step() <= c.step() && m.offset() > offset) {
          offset = Math.min(t.length(), m.offset());
        }
      }
      examples += offset - o.offset();
      offsets.add(new MasterState.TaskOffset(o.epoch(), o.task(), offset));
      if (offset < t.length()) unfinished = Math.min(unfinished, o.epoch());
      newestEpoch = Math.max(newestEpoch, o.epoch());
    }
    // A mark may finish an epoch whose last report has not arrived yet.
    int epochsDone = Math.max(reported.epochsDone(), unfinished == Integer.MAX_VALUE ? newestEpoch + 1 : unfinished);
    if (s.job().boundedByEpochs()) epochsDone = Math.min(epochsDone, s.job().epochs());
    return Optional.of(new MasterState.CommittedCheckpoint(c.step(), c.dir(), offsets, epochsDone, examples,
        reported.trainerSteps()));
  }

  /**
   * The rollback due as {@code trainerId} leaves: it is the last member of a running all-reduce job
   * that has a checkpoint; else null.
   */
  static Master.RolledBackToCheckpoint onLeaving(MasterState s, String trainerId) {
    return rollBack(s, trainerId, "every trainer left the ring");
  }

  /**
   * The events of {@code joined}: with a rollback when it is a new actor of the only member of a
   * running all-reduce job (which restarted before its old actor was noticed gone, and with it the
   * ring's only replica).
   */
  static List<Master.Event> joining(MasterState s, Master.TrainerJoined joined) {
    Master.RolledBackToCheckpoint back = rollBack(s, joined.trainerId(), "the ring's only member restarted");
    return back == null ? List.of(joined) : List.of(joined, back);
  }

  /** Back to the checkpoint when {@code trainerId} is the only member of a running all-reduce job that has one. */
  private static Master.RolledBackToCheckpoint rollBack(MasterState s, String trainerId, String why) {
    if (!allReduce(s) || !s.started() || s.done() || s.checkpoint() == null) return null;
    if (s.members().size() != 1 || !s.members().containsKey(trainerId)) return null;
    long step = s.checkpoint().step();
    return new Master.RolledBackToCheckpoint(step, s.generation() + 1,
        why + "; the next ring resumes from the replica of step " + step);
  }

  private static boolean allReduce(MasterState s) {
    return s.job() != null && s.job().mode() == BlockSpec.Mode.ALLREDUCE;
  }
}
