package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The master's state on its own, without an actor. */
class MasterStateTest {
  @Test
  void aResumedJobStartsFromTheCheckpointsOffsetsAndLeasesItsTasksFromThere() {
    // 100 examples over 2 trainers: epoch 0 done, tasks 0 and 1 of epoch 1 read up to 20 and 30 by step 7.
    var from = new JobProtocol.ResumePoint(7, "/ckpt/step-7", 1, 150,
        List.of(new JobProtocol.TaskOffset(1, 0, 20), new JobProtocol.TaskOffset(1, 1, 30)));
    MasterState s = new MasterState().submitted(MasterTest.job(), from);
    JobProtocol.JobStatus status = s.status();
    assertEquals(List.of(1, 150L, 7L, "/ckpt/step-7", 0L), List.of(status.epochsDone(), status.examplesReported(),
        status.checkpointStep(), status.checkpointDir(), status.generation()));
    assertNull(s.task(0, 0));
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    TaskState first = s.nextFreeTask();
    assertEquals(List.of(1, 0, 50, 20L), List.of(first.epoch, first.from, first.to, first.offset));
    s.leased(1, 0, "a");
    s.progressed(1, 0, 30, "a", 8);
    assertEquals(160, s.status().examplesReported());
    // A rollback (checkpoint durability) returns to the checkpoint resumed from.
    s.rolledBack(7, 1);
    assertEquals(List.of(20L, 30L), List.of(s.task(1, 0).offset, s.task(1, 1).offset));
    assertEquals(150, s.status().examplesReported());
  }

  @Test
  void aCopyIsUnchangedByEventsAppliedToTheStateItWasTakenFrom() {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 20, "a", 2);
    s.left("a");
    MasterState copy = s.copy();
    var before = copy.status();

    s.settled(0, 0, "a", 28, 3, Map.of("w#0", 36L));
    s.joined("c", null);
    s.leased(0, 0, "c");
    s.progressed(0, 0, 40, "c", 5);
    s.checkpointCommitted(s.checkpointAt(5, ""));
    s.rolledBack(5, 1);

    assertEquals(before, copy.status());
    TaskState t = copy.task(0, 0);
    assertEquals(List.of(20L, 0L), List.of(t.offset, t.floorOffset));
    assertEquals("a", t.settlingFor);
    assertNull(t.leasedTo);
    assertEquals(Map.of(), t.skip);
    assertEquals(1, t.history.size());
    assertEquals(List.of("b"), List.copyOf(copy.members().keySet()));
    assertEquals(2, copy.registration("a").lastStep());
  }
}
