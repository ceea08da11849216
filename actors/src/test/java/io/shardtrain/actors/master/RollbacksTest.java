package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RollbacksTest {
  /** A started sync job with a committed checkpoint at step 7. */
  static MasterState checkpointedAt7(JobSpec job) {
    MasterState s = new MasterState().submitted(job, null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 20, "a", 7);
    s.checkpointCommitted(s.checkpointAt(7, ""));
    return s;
  }

  static Rollbacks rollbacks(RecordingBlocks blocks, boolean checkpointDurability) {
    return new Rollbacks(blocks, LoggerFactory.getLogger(RollbacksTest.class), checkpointDurability);
  }

  @Test
  void everyBlockRollsBackToTheCheckpointUnderTheNextGenerationThenTheMasterDoes() {
    RecordingBlocks blocks = new RecordingBlocks();
    Rollbacks rollbacks = rollbacks(blocks, true);
    MasterState s = checkpointedAt7(MasterTest.job());
    rollbacks.start(s, "ps node lost");
    assertTrue(rollbacks.running());
    assertEquals(1, rollbacks.started());
    assertEquals(List.of("rollback w#0 7 g1", "rollback w#1 7 g1"), blocks.take());
    assertNull(rollbacks.answered(s, "w#0", 1, null));
    assertEquals(new Master.RolledBackToCheckpoint(7, 1, "ps node lost"), rollbacks.answered(s, "w#1", 1, null));
    assertFalse(rollbacks.running());
  }

  @Test
  void aBlockWhoseAnswerFailedIsAskedAgainAndOneWhoseAnswerIsOutIsNot() {
    RecordingBlocks blocks = new RecordingBlocks();
    Rollbacks rollbacks = rollbacks(blocks, true);
    MasterState s = checkpointedAt7(MasterTest.job());
    rollbacks.start(s, "ps node lost");
    blocks.take();
    rollbacks.resend(s);
    assertEquals(List.of(), blocks.take());
    assertNull(rollbacks.answered(s, "w#0", 1, new RuntimeException("timed out")));
    rollbacks.resend(s);
    assertEquals(List.of("rollback w#0 7 g1"), blocks.take());
  }

  @Test
  void aSecondLossDuringARollbackStartsItOverUnderANewerGeneration() {
    RecordingBlocks blocks = new RecordingBlocks();
    Rollbacks rollbacks = rollbacks(blocks, true);
    MasterState s = checkpointedAt7(MasterTest.job());
    rollbacks.start(s, "ps node lost");
    assertNull(rollbacks.answered(s, "w#0", 1, null));
    rollbacks.start(s, "another ps node lost");
    assertEquals(List.of("rollback w#0 7 g2", "rollback w#1 7 g2"), blocks.take().subList(2, 4));
    assertNull(rollbacks.answered(s, "w#1", 1, null), "an answer of the abandoned generation");
    assertNull(rollbacks.answered(s, "w#1", 2, null));
    assertEquals(new Master.RolledBackToCheckpoint(7, 2, "another ps node lost"),
        rollbacks.answered(s, "w#0", 2, null));
    assertEquals(2, rollbacks.started());
  }

  @Test
  void onlyARunningSyncJobWithCheckpointDurabilityRollsBack() {
    JobSpec sync = MasterTest.job();
    JobSpec async = new JobSpec(sync.jobId(), sync.dataset(), sync.trainExamples(), sync.inputDim(), sync.classes(),
        sync.hidden(), sync.activation(), sync.seed(), BlockSpec.Mode.ASYNC, sync.trainers(), sync.batch(),
        sync.epochs(), sync.steps(), sync.optimizer(), sync.lr(), sync.lrSchedule(), sync.weightDecay(),
        sync.maxStaleness(), sync.blockSize(), sync.blocks(), null);
    assertTrue(rollbacks(new RecordingBlocks(), true).needed(checkpointedAt7(sync)));
    assertFalse(rollbacks(new RecordingBlocks(), false).needed(checkpointedAt7(sync)), "exact durability");
    assertFalse(rollbacks(new RecordingBlocks(), true).needed(checkpointedAt7(async)));
    assertFalse(rollbacks(new RecordingBlocks(), true).needed(new MasterState().submitted(sync, null)), "not started");
    RecordingBlocks blocks = new RecordingBlocks();
    Rollbacks exact = rollbacks(blocks, false);
    exact.start(checkpointedAt7(sync), "ps node lost");
    assertEquals(List.of(), blocks.take());
    assertFalse(exact.running());
    assertEquals(0, exact.started());
  }
}
