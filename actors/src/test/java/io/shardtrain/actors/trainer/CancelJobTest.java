package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.persistence.model.CheckpointFiles;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CancelJobTest {
  private ActorTestKit kit;

  @TempDir
  Path tmp;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /**
   * A cancelled sync job: both trainers finish the step they are in and leave, every block stops at
   * that step, the job reads done and cancelled, and a checkpoint of it is taken at that step. A
   * second cancel is refused.
   */
  @Test
  void trainersOfACancelledJobFinishTheirStepAndLeaveWithEveryBlockAtThatStep() throws Exception {
    kit = TrainerRejoinTest.newKit();
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = TrainerRejoinTest.startJob(kit, st, "cancel-me");
    List<TrainerRejoinTest.Listener> listeners = TrainerRejoinTest.twoSlowTrainersPastStepTwo(st);
    TrainerRejoinTest.Listener l1 = listeners.get(0);
    TrainerRejoinTest.Listener l2 = listeners.get(1);

    JobProtocol.JobStatus cancelled = st.cancel("cancel-me").toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(cancelled.done() && cancelled.cancelled(), String.valueOf(cancelled));
    assertEquals(java.util.Set.of("t1", "t2"), java.util.Set.copyOf(cancelled.members()));
    l1.finished.get(30, TimeUnit.SECONDS);
    l2.finished.get(30, TimeUnit.SECONDS);
    // The job runs 24 steps; both stopped at one step short of that.
    assertEquals(l1.lastStep, l2.lastStep);
    long last = l1.lastStep;
    assertTrue(last >= 2 && last < 24, "stopped at step " + last);
    List<BlockProtocol.BlockStats> blocks = st.blockStats(plan.job()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    for (BlockProtocol.BlockStats b : blocks) assertEquals(last, b.version(), b.entityId());

    JobProtocol.JobStatus status = st.status("cancel-me").toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(status.done() && status.cancelled(), String.valueOf(status));
    JobProtocol.CheckpointWritten written = st.checkpoint("cancel-me", tmp.resolve("ckpt").toString())
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertEquals(last, written.step());
    assertEquals(last, CheckpointFiles.load(tmp.resolve("ckpt")).step());

    ExecutionException again = assertThrows(ExecutionException.class,
        () -> st.cancel("cancel-me").toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertEquals("job 'cancel-me' was cancelled already", again.getCause().getMessage());
  }
}
