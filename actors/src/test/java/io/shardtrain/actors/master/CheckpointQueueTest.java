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
    return queue(everySteps, false);
  }

  /** The queue's clock, in nanoseconds. */
  long now;
  /** Rollbacks the queue's master has started. */
  long rollbacks;

  CheckpointQueue queue(long everySteps, boolean checkpointDurability) {
    return new CheckpointQueue(everySteps, checkpointDurability,
        (s, request) -> started.add(request == null ? "periodic" : request.dir()), () -> now, () -> rollbacks);
  }

  /** {@link MasterTest#job()} bounded by {@code steps} steps instead of epochs. */
  static JobSpec stepBounded(int steps) {
    JobSpec j = MasterTest.job();
    return new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(),
        j.activation(), j.seed(), j.mode(), j.trainers(), j.batch(), 0, steps, j.optimizer(), j.lr(), j.lrSchedule(),
        j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(), null);
  }

  /** A job of 40 steps whose trainer "a" reported its last step. */
  static MasterState doneAt40() {
    MasterState s = running(stepBounded(40));
    s.leased(0, 0, "a");
    s.progressed(0, 0, 400, "a", 40);
    return s;
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

  /**
   * A checkpoint running when a rollback starts fails anyway, and its asks to a lost node's blocks
   * would hold the queue for their timeout: the next starts at once, and the late end of the one
   * given up changes nothing.
   */
  @Test
  void aCheckpointRunningWhenARollbackStartsIsGivenUpAndItsLateEndIgnored() {
    CheckpointQueue queue = queue(0);
    MasterState s = running(MasterTest.job());
    queue.request(s, request("before"));
    queue.request(s, request("waits"));
    assertEquals(List.of("before"), started);
    rollbacks++;
    queue.next(s);
    assertEquals(List.of("before", "waits"), started, "started without waiting for the one before the rollback");
    queue.finished(0, false);
    assertTrue(queue.running(), "the one after the rollback still runs");
    queue.finished(1, true);
    assertFalse(queue.running());
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
    queue.finished(true);
    queue.next(s);
    queue.finished(true);
    queue.next(s);
    assertEquals(List.of("one", "two", "three"), started);
    queue.finished(true);
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
    queue.finished(true);
    queue.next(s);
    assertEquals(List.of("periodic", "waits"), started);
    assertFalse(queue(0).periodicDue(s, false), "every-steps 0: on demand only");
    assertFalse(queue(10).periodicDue(new MasterState().submitted(MasterTest.job(), null), false), "not started");
  }

  @Test
  void theNextPeriodicCheckpointStartsAsSoonAsOneCommitsAfterAFailureOnATick() {
    CheckpointQueue queue = queue(10);
    MasterState s = running(MasterTest.job());
    queue.tick(s, false);
    queue.finished(true);
    queue.nextAfterCommit(s, false);
    assertEquals(List.of("periodic", "periodic"), started, "committed: the next at once");
    queue.request(s, request("asked"));
    queue.finished(true);
    queue.nextAfterCommit(s, false);
    assertEquals(List.of("periodic", "periodic", "asked"), started, "a waiting request first");
    queue.finished(true);
    queue.nextAfterCommit(s, true);
    assertEquals(3, started.size(), "none while a rollback runs");
    queue.tick(s, false);
    queue.finished(false);
    queue.next(s);
    assertEquals(4, started.size(), "failed: nothing until the next tick");
    queue.tick(s, false);
    assertEquals(5, started.size());
  }

  @Test
  void theLastStepOfAStepBoundedJobIsCheckpointedPeriodicallyOnce() {
    MasterState s = running(stepBounded(6));
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
  void withCheckpointDurabilityADoneJobsBlocksLeaveMemoryOnlyOnceACheckpointOfItsLastStepCommitted() {
    CheckpointQueue queue = queue(10, true);
    MasterState s = running(stepBounded(40));
    s.leased(0, 0, "a");
    s.progressed(0, 0, 300, "a", 30);
    assertFalse(queue.mayRetire(s, false), "not done");
    assertEquals(List.of(), started, "nothing to checkpoint before the job is done");
    queue.tick(s, false);
    assertEquals(List.of("periodic"), started, "step 30's, or the next");
    s.progressed(0, 0, 400, "a", 40);
    assertTrue(s.done());
    assertFalse(queue.mayRetire(s, false), "a checkpoint runs");
    queue.finished(true);
    // That one started before the job was done: it may be of a step before the last.
    assertFalse(queue.mayRetire(s, false));
    assertEquals(List.of("periodic", "periodic"), started, "the last step's");
    queue.finished(false);
    assertFalse(queue.mayRetire(s, true), "a rollback runs");
    assertEquals(2, started.size(), "none during a rollback");
    now += CheckpointQueue.FIRST_RETRY_DELAY_NANOS;
    assertFalse(queue.mayRetire(s, false), "failed: tried again");
    assertEquals(3, started.size());
    queue.finished(true);
    assertTrue(queue.mayRetire(s, false));
    assertTrue(queue.mayRetire(s, false));
    assertEquals(3, started.size(), "once");

    started.clear();
    assertTrue(queue(10, false).mayRetire(s, false), "exact durability journals every step");
    assertEquals(List.of(), started);
  }

  @Test
  void aDoneJobsFailingLastCheckpointIsTriedAgainAfterDelaysThatDoubleUpToAMinute() {
    CheckpointQueue queue = queue(0, true);
    MasterState s = doneAt40();
    assertFalse(queue.mayRetire(s, false));
    assertEquals(1, started.size(), "the last step's checkpoint");
    List<Long> retries = new ArrayList<>();
    long failedAt = now;
    queue.finished(false);
    // Master ticks every 100 ms for 6 minutes, the checkpoint failing each time it is tried.
    for (int tick = 0; tick < 3600; tick++) {
      now += 100_000_000L;
      int before = started.size();
      assertFalse(queue.mayRetire(s, false));
      if (started.size() > before) {
        retries.add((now - failedAt) / 100_000_000L);
        failedAt = now;
        queue.finished(false);
      }
    }
    // Tenths of a second between a failure and the next try.
    assertEquals(List.of(10L, 20L, 40L, 80L, 160L, 320L, 600L, 600L, 600L, 600L), retries.subList(0, 10));
    now += CheckpointQueue.MAX_RETRY_DELAY_NANOS;
    assertFalse(queue.mayRetire(s, false));
    queue.finished(true);
    assertTrue(queue.mayRetire(s, false), "committed at last: the blocks may go");
  }

  @Test
  void aDoneJobsBlocksStayInMemoryWhileACheckpointReadsWhatTheyCaptured() {
    CheckpointQueue queue = queue(0, false);
    MasterState s = doneAt40();
    assertTrue(s.done());
    queue.request(s, request("/tmp/last"));
    assertEquals(List.of("/tmp/last"), started);
    assertFalse(queue.mayRetire(s, false), "the blocks hold the captured step until it is read");
    queue.finished(true);
    assertTrue(queue.mayRetire(s, false));
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
    JobSpec ctr = new JobSpec(j.jobId(), "ctr", j.trainExamples(), 4, 2, java.util.List.of(), j.activation(), j.seed(),
        BlockSpec.Mode.SYNC, j.trainers(), j.batch(), j.epochs(), j.steps(), j.optimizer(), j.lr(), j.lrSchedule(),
        j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(),
        new io.shardtrain.actors.job.CtrModel(3, 4, 2, 100, 1, 0.05f, 0.1f, 0.01f, 64, 1));
    assertEquals("job " + j.jobId() + " trains a click-through model: a checkpoint holds the blocks, not its table's"
        + " rows and their optimizer state; save the model with save-model once the job is done or cancelled",
        CheckpointQueue.refusal(running(ctr)));
    assertFalse(queue(1).periodicDue(running(ctr), false), "no periodic checkpoint of a click-through job either");
  }
}
