package io.shardtrain.actors.master;

import akka.actor.testkit.typed.javadsl.TestInbox;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobProtocol.TakeCheckpoint;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CheckpointQueueTest {
  /** The directories of the checkpoints started, "periodic" for a periodic one. */
  final List<String> started = new ArrayList<>();

  CheckpointQueue queue(long everySteps) {
    return new CheckpointQueue(everySteps, (s, request) -> started.add(request == null ? "periodic" : request.dir()));
  }

  static TakeCheckpoint request(String dir) {
    return new TakeCheckpoint(dir, TestInbox.<StatusReply<JobProtocol.CheckpointWritten>>create().getRef());
  }

  static MasterState running(JobSpec job) {
    MasterState s = new MasterState().submitted(job, null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    return s;
  }

  @Test
  void requestsRunOneAtATimeInTheOrderTheyCame() {
    CheckpointQueue queue = queue(0);
    MasterState s = running(MasterTest.job());
    queue.request(s, request("one"));
    queue.request(s, request("two"));
    queue.request(s, request("three"));
    assertEquals(List.of("one"), started);
    queue.next(s);
    assertEquals(List.of("one"), started, "one still runs");
    queue.finished();
    queue.next(s);
    queue.finished();
    queue.next(s);
    assertEquals(List.of("one", "two", "three"), started);
    queue.finished();
    queue.next(s);
    assertFalse(queue.running());
    assertEquals(3, started.size());
  }

  @Test
  void aPeriodicCheckpointStartsOnATickWhenNothingRunsAndNoRollbackDoes() {
    CheckpointQueue queue = queue(10);
    MasterState s = running(MasterTest.job());
    queue.tick(s, true);
    assertEquals(List.of(), started);
    queue.tick(s, false);
    assertEquals(List.of("periodic"), started);
    queue.tick(s, false);
    queue.request(s, request("waits"));
    assertEquals(List.of("periodic"), started);
    queue.finished();
    queue.next(s);
    assertEquals(List.of("periodic", "waits"), started);
    assertFalse(queue(0).periodicDue(s, false), "every-steps 0: on demand only");
    assertFalse(queue(10).periodicDue(new MasterState().submitted(MasterTest.job(), null), false), "not started");
  }

  @Test
  void theLastStepOfAStepBoundedJobIsCheckpointedPeriodicallyOnce() {
    JobSpec j = MasterTest.job();
    JobSpec sixSteps = new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(),
        j.activation(), j.seed(), j.mode(), j.trainers(), j.batch(), 0, 6, j.optimizer(), j.lr(), j.lrSchedule(),
        j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(), null);
    MasterState s = running(sixSteps);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 20, "a", 5);
    s.checkpointCommitted(s.checkpointAt(5, ""));
    assertTrue(queue(5).periodicDue(s, false));
    // Committed at the deadline, before any trainer reported step 6.
    s.checkpointCommitted(s.checkpointAt(6, ""));
    assertFalse(s.done());
    assertFalse(queue(5).periodicDue(s, false));
  }

  @Test
  void onlyASubmittedSyncJobCanBeCheckpointedAndTheRefusalNamesTheMode() {
    JobSpec j = MasterTest.job();
    JobSpec async = new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(),
        j.activation(), j.seed(), BlockSpec.Mode.ASYNC, j.trainers(), j.batch(), j.epochs(), j.steps(), j.optimizer(),
        j.lr(), j.lrSchedule(), j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(), null);
    assertEquals("no job has been submitted; nothing to checkpoint", CheckpointQueue.refusal(new MasterState()));
    assertTrue(CheckpointQueue.refusal(running(async)).contains("is async"));
    JobSpec ring = new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(),
        j.activation(), j.seed(), BlockSpec.Mode.ALLREDUCE, j.trainers(), j.batch(), j.epochs(), j.steps(),
        j.optimizer(), j.lr(), j.lrSchedule(), j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(), null);
    assertEquals("job " + j.jobId() + " is all-reduce: its ring checkpoints itself every"
        + " shardtrain.trainer.checkpoint-every steps; save the model with save-model",
        CheckpointQueue.refusal(running(ring)));
    assertNull(CheckpointQueue.refusal(running(j)));
  }
}
