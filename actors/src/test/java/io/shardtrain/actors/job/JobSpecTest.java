package io.shardtrain.actors.job;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Initialization;
import io.shardtrain.compute.nn.Mlp;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JobSpecTest {

  private static JobSpec plan(BlockSpec.Mode mode, int trainers) {
    return plan(mode, trainers, "").job();
  }

  private static ShardTrain.Plan plan(BlockSpec.Mode mode, int trainers, String settings) {
    TrainSettings s = TrainSettings.fromConfig(ConfigFactory.parseString(
        "shardtrain.train { batch = 64, hidden = [8], steps = 100 }\n" + settings).withFallback(ConfigFactory.load()));
    return ShardTrain.plan(s, "job", 4, 1000, 2, mode, trainers, 64, -1);
  }

  @Test
  void aPytorchInitJobsTrainersBuildTheModelItsBlocksStartFromAndAnAutoJobIsWrittenWithoutIt() {
    ShardTrain.Plan torch = plan(BlockSpec.Mode.ALLREDUCE, 2, "shardtrain.train.init = PyTorch");
    assertEquals("pytorch", torch.job().init());
    assertEquals(Initialization.PYTORCH, torch.job().initialization());
    // Trainers build their model from the job: it must start from the values the plan placed.
    Mlp trainers = torch.job().newModel(CpuBackend.create(1));
    for (int i = 0; i < trainers.parameters().size(); i++) {
      assertArrayEquals(torch.model().parameters().get(i).value().data(), trainers.parameters().get(i).value().data());
    }
    float[] bias = trainers.parameters().get(1).value().data();
    assertTrue(Math.abs(bias[0]) > 0 && Math.abs(bias[0]) <= 0.5f, "dense1.bias[0] " + bias[0] + " within 1/sqrt(4)");
    assertEquals("pytorch", torch.job().snapshot(trainers, 0).description().get("init"));

    JobSpec auto = plan(BlockSpec.Mode.SYNC, 2, "shardtrain.train.init = auto").job();
    assertNull(auto.init(), "written as a job was before the choice existed");
    assertEquals(Initialization.AUTO, auto.initialization());
    assertFalse(auto.snapshot(auto.newModel(CpuBackend.create(1)), 0).description().containsKey("init"));
    var e = assertThrows(IllegalArgumentException.class, () -> plan(BlockSpec.Mode.SYNC, 2, "shardtrain.train.init = he"));
    assertEquals("unknown init 'he': expected auto or pytorch", e.getMessage());
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
