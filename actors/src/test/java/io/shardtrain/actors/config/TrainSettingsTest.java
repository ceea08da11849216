package io.shardtrain.actors.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.compute.nn.Activation;
import org.junit.jupiter.api.Test;

class TrainSettingsTest {
  private static TrainSettings with(String hocon) {
    return TrainSettings.fromConfig(ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
  }

  @Test
  void defaultsComeFromReferenceConf() {
    TrainSettings s = with("");
    assertEquals("mnist", s.dataset());
    assertArrayEquals(new int[] {512, 256}, s.hidden());
    assertEquals(64, s.batch());
    assertEquals(3, s.epochs());
    assertEquals(0.05, s.lr(), 1e-12);
  }

  @Test
  void datasetNamesAreTakenInAnyCaseButACriteoPathKeepsItsOwn() {
    assertEquals("mnist", with("shardtrain.train.dataset = MNIST").dataset());
    assertEquals("fashion-mnist", with("shardtrain.train.dataset = Fashion-MNIST").dataset());
    assertEquals("criteo:/data/Criteo/Day_0.tsv", with("shardtrain.train.dataset = \"Criteo:/data/Criteo/Day_0.tsv\"")
        .dataset());
  }

  @Test
  void bareCosineIsBoundToTheJobLength() {
    TrainSettings s = with("shardtrain.train.lr-schedule = \"warmup:10,cosine\"");
    assertEquals("warmup:10,cosine:2814", s.lrScheduleFor(2814));
    assertEquals("cosine:500:0.001", with("shardtrain.train.lr-schedule = \"cosine:500:0.001\"").lrScheduleFor(9));
    assertEquals("step:100:0.5", with("shardtrain.train.lr-schedule = \"step:100:0.5\"").lrScheduleFor(9));
  }

  @Test
  void stepsPerTrainerCoverEachTrainersShareOfEveryEpochUnlessStepsAreSet() {
    TrainSettings s = with("");
    assertEquals(3 * 938, s.stepsPerTrainer(60000, 1)); // ceil(60000 / 64) per epoch
    assertEquals(3 * 469, s.stepsPerTrainer(60000, 2)); // ceil(30000 / 64)
    assertEquals(3 * 1, s.stepsPerTrainer(101, 2)); // shares of 51: one short batch per epoch
    assertEquals(20, with("shardtrain.train.steps = 20").stepsPerTrainer(60000, 2));
  }

  @Test
  void badValuesFailWithTheirName() {
    var e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.batch = 0"));
    assertTrue(e.getMessage().contains("batch"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.hidden = [512, -1]"));
    assertTrue(e.getMessage().contains("hidden"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> TrainSettings.parseHidden("512,x"));
    assertTrue(e.getMessage().contains("512,x"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.activation = swish"));
    assertEquals("unknown activation 'swish': expected relu, tanh or sigmoid", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.eval-every = -1"));
    assertEquals("eval-every must not be negative (0: at each epoch's end), got -1", e.getMessage());
    assertEquals(Activation.TANH, Activation.parse(with("shardtrain.train.activation = Tanh").activation()));
    e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.init = kaiming"));
    assertEquals("unknown init 'kaiming': expected auto or pytorch", e.getMessage());
    assertEquals("PyTorch", with("shardtrain.train.init = PyTorch").init());
  }

  @Test
  void aMisspeltOptimizerOrScheduleAndAnEmptyHiddenWidthFailHereBeforeAnyNodeOrDataIsNeeded() {
    var e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.optimizer = adamm"));
    assertTrue(e.getMessage().startsWith("unknown optimizer 'adamm'"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.lr-schedule = cosin"));
    assertTrue(e.getMessage().startsWith("bad learning-rate schedule 'cosin'"), e.getMessage());
    assertEquals("warmup:5,cosine:300", with("shardtrain.train.lr-schedule = \"warmup:5,cosine\"").lrScheduleFor(300));
    for (String bad : new String[] {"512,256,", ",", "512,,256"}) {
      e = assertThrows(IllegalArgumentException.class, () -> TrainSettings.parseHidden(bad), bad);
      assertEquals("hidden must be comma-separated widths like 512,256 (empty: no hidden layer), got '" + bad + "'",
          e.getMessage());
    }
    assertArrayEquals(new int[0], TrainSettings.parseHidden(" "));
    assertArrayEquals(new int[] {512, 256}, TrainSettings.parseHidden("512, 256"));
  }
}
