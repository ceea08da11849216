package io.shardtrain.actors.job;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;

class JobSpecTest {

  private static JobSpec plan(BlockSpec.Mode mode, int trainers) {
    TrainSettings s = TrainSettings.fromConfig(ConfigFactory.parseString(
        "shardtrain.train { batch = 64, hidden = [8], steps = 100 }").withFallback(ConfigFactory.load()));
    return ShardTrain.plan(s, "job", 4, 1000, 2, mode, trainers, 64, -1).job();
  }

  @Test
  void anUpdateIsPlannedToCoverEveryTrainersBatchInSyncAndOneBatchInAsync() {
    assertEquals(128, plan(BlockSpec.Mode.SYNC, 2).examplesPerUpdate());
    assertEquals(64, plan(BlockSpec.Mode.SYNC, 1).examplesPerUpdate());
    assertEquals(64, plan(BlockSpec.Mode.ASYNC, 2).examplesPerUpdate());
    // The bare cosine of the default schedule is sized in such updates: 100 steps of each trainer.
    assertEquals("cosine:100", plan(BlockSpec.Mode.SYNC, 2).lrSchedule());
    assertEquals("cosine:200", plan(BlockSpec.Mode.ASYNC, 2).lrSchedule());
  }
}
