package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.compute.data.Dataset;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StopOnShutdownTest {
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /**
   * Trainers whose node shuts down in the middle of a job stop as they would when asked (their step
   * finished and reported, the job left), before the node's sharding goes: their listeners hear
   * that they finished, where a trainer stopped with its node would never say so.
   */
  @Test
  void trainersOfANodeThatShutsDownFinishTheirStepAndLeaveTheJob() throws Exception {
    kit = TrainerRejoinTest.newKit();
    ShardTrain st = ShardTrain.start(kit.system());
    TrainerRejoinTest.startJob(kit, st, "shut-down");
    Dataset train = TrainerRejoinTest.data();
    TrainerRejoinTest.Listener l1 = new TrainerRejoinTest.Listener();
    TrainerRejoinTest.Listener l2 = new TrainerRejoinTest.Listener();
    l1.slow = true;
    l2.slow = true;
    st.startTrainer(TrainerRejoinTest.setup(st, "t1", train, l1));
    st.startTrainer(TrainerRejoinTest.setup(st, "t2", train, l2));
    long deadline = System.nanoTime() + TrainerRejoinTest.TIMEOUT.toNanos();
    while (l1.lastStep < 2 || l2.lastStep < 2) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the trainers took no steps");
      Thread.sleep(10);
    }
    kit.system().terminate();
    long t1 = l1.finished.get(30, TimeUnit.SECONDS);
    long t2 = l2.finished.get(30, TimeUnit.SECONDS);
    assertTrue(t1 >= 2 && t1 < 24 && t2 >= 2 && t2 < 24, "stopped in the middle of the job: " + t1 + " and " + t2);
  }
}
