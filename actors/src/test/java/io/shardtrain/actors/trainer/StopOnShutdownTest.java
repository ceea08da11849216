package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
import java.util.List;
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
    List<TrainerRejoinTest.Listener> listeners = TrainerRejoinTest.twoSlowTrainersPastStepTwo(st);
    kit.system().terminate();
    long t1 = listeners.get(0).finished.get(30, TimeUnit.SECONDS);
    long t2 = listeners.get(1).finished.get(30, TimeUnit.SECONDS);
    assertTrue(t1 >= 2 && t1 < 24 && t2 >= 2 && t2 < 24, "stopped in the middle of the job: " + t1 + " and " + t2);
  }
}
