package io.shardtrain.actors.config;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShardTrainConfigTest {
  private static Config with(String hocon) {
    return ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve();
  }

  @Test
  void aMissingConfigFileOrADirectoryIsNamedAsSuch(@TempDir Path dir) {
    var e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(dir));
    assertEquals("config file " + dir + " is a directory", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.load(dir));
    assertEquals("config file " + dir + " is a directory", e.getMessage());
    Path missing = dir.resolve("missing.conf");
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(missing));
    assertEquals("config file " + missing + " does not exist", e.getMessage());
  }

  @Test
  void referenceDefaultsPassValidation() {
    assertDoesNotThrow(() -> ShardTrainConfig.validate(ConfigFactory.load()));
  }

  @Test
  void unknownKeyFailsNamingTheKey() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.learning-rate = 0.1")));
    assertTrue(e.getMessage().contains("shardtrain.train.learning-rate"), e.getMessage());
  }

  @Test
  void illTypedKeyFailsNamingKeyAndType() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.batch = lots")));
    assertTrue(e.getMessage().contains("shardtrain.train.batch"), e.getMessage());
    assertTrue(e.getMessage().contains("number"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.hidden = 512")));
    assertTrue(e.getMessage().contains("shardtrain.train.hidden"), e.getMessage());
  }

  @Test
  void numericStringFromEnvironmentIsAccepted() {
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.batch = \"128\"")));
  }
}
