package io.shardtrain.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** All-reduce checkpoints and the resumption of a job whose trainers all left, on the master's state alone. */
class RingResumeTest {

  /** 100 examples, 2 trainers, 2 epochs: each epoch is tasks 0 [0, 50) and 1 [50, 100). */
  static JobSpec job(BlockSpec.Mode mode) {
    return new JobSpec("job-ar", "test", 100, 4, 2, List.of(3), "relu", 7, mode, 2, 10, 2, 0,
        "momentum", 0.1f, "constant", 0f, -1, 16, List.of("w#0", "w#1"), null);
  }

  private static MasterState running(BlockSpec.Mode mode) {
    MasterState s = new MasterState().submitted(job(mode), null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.leased(0, 1, "b");
    return s;
  }

  private static JobProtocol.RingCheckpointed checkpointed(long generation, long step,
      JobProtocol.RingMark... marks) {
    return new JobProtocol.RingCheckpointed("a", generation, step, "/ck/job-ar/ring-step-" + step, List.of(marks));
  }

  @Test
  void aRingCheckpointTakesEachTasksOffsetAtItsStepFromTheReportsOrTheMembersMarksWhereTheseAreAhead() {
    MasterState s = running(BlockSpec.Mode.ALLREDUCE);
    // a reported steps 1 to 4 already; b's reports trail: step 2 only, while the ring applied step 3.
    for (int step = 1; step <= 4; step++) s.progressed(0, 0, 10L * step, "a", step);
    s.progressed(0, 1, 10, "b", 1);
    s.progressed(0, 1, 20, "b", 2);
    var marks = new JobProtocol.RingMark[] {new JobProtocol.RingMark("a", 0, 0, 30, 3),
        new JobProtocol.RingMark("b", 0, 1, 30, 3)};

    MasterState.CommittedCheckpoint c = RingResume.committed(s, checkpointed(0, 3, marks)).orElseThrow();

    assertEquals(List.of(new MasterState.TaskOffset(0, 0, 30), new MasterState.TaskOffset(0, 1, 30),
        new MasterState.TaskOffset(1, 0, 0), new MasterState.TaskOffset(1, 1, 0)), c.offsets());
    assertEquals(List.of(3L, 60L, 0, "/ck/job-ar/ring-step-3"), List.of(c.step(), c.examples(), c.epochsDone(),
        c.dir()));
    // Another generation's, and one not newer than the committed checkpoint, commit nothing.
    assertTrue(RingResume.committed(s, checkpointed(1, 3, marks)).isEmpty());
    s.checkpointCommitted(c);
    assertTrue(RingResume.committed(s, checkpointed(0, 3, marks)).isEmpty());
    // Sync jobs take their checkpoints with the blocks.
    assertTrue(RingResume.committed(running(BlockSpec.Mode.SYNC), checkpointed(0, 3, marks)).isEmpty());
  }

  @Test
  void aMarkThatFinishesAnEpochBeforeItsLastReportCountsTheEpochDone() {
    MasterState s = running(BlockSpec.Mode.ALLREDUCE);
    s.progressed(0, 0, 50, "a", 5);
    s.progressed(0, 1, 40, "b", 4);
    MasterState.CommittedCheckpoint c = RingResume.committed(s, checkpointed(0, 5,
        new JobProtocol.RingMark("b", 0, 1, 50, 5))).orElseThrow();
    assertEquals(List.of(1, 100L), List.of(c.epochsDone(), c.examples()));
  }

  @Test
  void whenTheLastTrainerLeavesTheJobGoesBackToTheRingCheckpointAndLeasesItsTasksFromThere() {
    MasterState s = running(BlockSpec.Mode.ALLREDUCE);
    for (int step = 1; step <= 3; step++) {
      s.progressed(0, 0, 10L * step, "a", step);
      s.progressed(0, 1, 10L * step, "b", step);
    }
    s.checkpointCommitted(RingResume.committed(s, checkpointed(0, 3)).orElseThrow());
    // The ring trains on past the checkpoint: those examples are applied by replicas that die with their trainers.
    s.progressed(0, 0, 45, "a", 5);
    s.progressed(0, 1, 50, "b", 5);
    assertEquals(95, s.status().examplesReported());

    assertNull(RingResume.onLeaving(s, "a"), "b is still in the ring");
    s.left("a");
    Master.RolledBackToCheckpoint back = RingResume.onLeaving(s, "b");
    assertEquals(List.of(3L, 1L), List.of(back.step(), back.generation()));
    s.left("b");
    s.rolledBack(back.step(), back.generation());

    assertEquals(List.of(30L, 30L), List.of(s.task(0, 0).offset, s.task(0, 1).offset));
    JobProtocol.JobStatus status = s.status();
    assertEquals(List.of(60L, 1L, 3L, 0), List.of(status.examplesReported(), status.generation(),
        status.checkpointStep(), status.epochsDone()));
    s.joined("c", null);
    TaskState next = s.nextFreeTask();
    assertEquals(List.of(0, 0, 30L), List.of(next.epoch, next.index, next.offset));
  }

  @Test
  void theOnlyMemberRegisteringAgainBeforeItsOldActorWasNoticedGoneAlsoGoesBackToTheRingCheckpoint() {
    MasterState s = running(BlockSpec.Mode.ALLREDUCE);
    s.progressed(0, 0, 10, "a", 1);
    s.progressed(0, 1, 10, "b", 1);
    s.checkpointCommitted(RingResume.committed(s, checkpointed(0, 1)).orElseThrow());
    s.progressed(0, 1, 40, "b", 4);
    Master.TrainerJoined again = new Master.TrainerJoined("b", null);
    assertEquals(List.of(again), RingResume.joining(s, again), "a is still in the ring: b takes a's replica");
    s.left("a");

    List<Master.Event> events = RingResume.joining(s, again);
    assertEquals(2, events.size());
    Master.RolledBackToCheckpoint back = (Master.RolledBackToCheckpoint) events.get(1);
    s.joined("b", null);
    s.rolledBack(back.step(), back.generation());
    assertEquals(List.of(10L, 10L, 20L), List.of(s.task(0, 0).offset, s.task(0, 1).offset,
        s.status().examplesReported()));
    // A trainer new to the job joins a ring with a replica (b's, or the restored one): nothing to roll back.
    assertEquals(1, RingResume.joining(s, new Master.TrainerJoined("c", null)).size());
  }

  @Test
  void noRollbackWithoutACheckpointOnceTheJobIsDoneOrInASyncJob() {
    MasterState none = running(BlockSpec.Mode.ALLREDUCE);
    none.left("a");
    assertNull(RingResume.onLeaving(none, "b"), "no checkpoint yet");

    MasterState done = running(BlockSpec.Mode.ALLREDUCE);
    done.checkpointCommitted(RingResume.committed(done, checkpointed(0, 1)).orElseThrow());
    for (int e = 0; e < 2; e++) {
      if (e == 1) {
        done.leased(1, 0, "a");
        done.leased(1, 1, "b");
      }
      done.progressed(e, 0, 50, "a", 10L + e);
      done.progressed(e, 1, 50, "b", 10L + e);
    }
    assertTrue(done.done());
    done.left("a");
    assertNull(RingResume.onLeaving(done, "b"), "the job is done");

    MasterState sync = running(BlockSpec.Mode.SYNC);
    sync.checkpointCommitted(sync.checkpointAt(0, ""));
    sync.left("a");
    assertNull(RingResume.onLeaving(sync, "b"), "a sync job rolls back with its blocks");
  }
}
