package io.shardtrain.actors.config;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(missing, "job file"));
    assertEquals("job file " + missing + " does not exist", e.getMessage());
  }

  @Test
  void anIncludedFileMustExistWhileClasspathIncludesStayOptional(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("model.conf"), "shardtrain.train.hidden = [8]\n");
    Path job = dir.resolve("job.conf");
    Files.writeString(job, "include \"model.conf\"\ninclude \"model\"\ninclude classpath(\"no-such-resource\")\n"
        + "shardtrain.train.steps = 5\n");
    Config c = ShardTrainConfig.parseFile(job, "job file");
    assertEquals(List.of(8), c.getIntList("shardtrain.train.hidden"));
    assertEquals(5, c.getInt("shardtrain.train.steps"));

    Files.writeString(job, "include \"moved.conf\"\nshardtrain.train.steps = 5\n");
    var e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(job, "job file"));
    assertTrue(e.getMessage().startsWith("job file " + job + ": ") && e.getMessage().contains(
        "include \"moved.conf\": no such file beside the file that includes it"), e.getMessage());
    Path gone = dir.resolve("gone.conf");
    Files.writeString(job, "include file(\"" + gone + "\")\n");
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.load(job));
    assertTrue(e.getMessage().contains("include \"" + gone + "\": no such file"), e.getMessage());
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
  void aMisspeltKeyOrSectionGetsTheNearestReferenceKeys() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.hiden = [32]")));
    assertTrue(e.getMessage().endsWith("; did you mean 'shardtrain.train.hidden'?"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.validate(with("shardtrain.trian.lr = 1")));
    assertTrue(e.getMessage().endsWith("; did you mean 'shardtrain.train'?"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.learning-rate = 0.1")));
    assertFalse(e.getMessage().contains("did you mean"), "nothing near: " + e.getMessage());
  }

  @Test
  void aFileWhoseTopLevelKeyIsAMisspeltShardtrainOrAkkaIsRefused(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("job.conf"), "shardtrian.train { hidden = [32] }\n");
    var e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.load(file));
    assertEquals("config file " + file + ": unknown top-level key 'shardtrian' (" + file + ": 1); did you mean"
        + " 'shardtrain'?", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(
        Files.writeString(dir.resolve("node.conf"), "aka.loglevel = DEBUG\n")));
    assertTrue(e.getMessage().endsWith("did you mean 'akka'?"), e.getMessage());
    // A section of shardtrain's without its prefix: the job would have run on the defaults.
    Path bare = Files.writeString(dir.resolve("bare.conf"), "train { dataset = mnist, steps = 50 }\n");
    e = assertThrows(IllegalArgumentException.class, () -> ShardTrainConfig.parseFile(bare));
    assertEquals("config file " + bare + ": unknown top-level key 'train' (" + bare + ": 1); did you mean"
        + " 'shardtrain.train'?", e.getMessage());
    Path other = Files.writeString(dir.resolve("other.conf"), "datastax-java-driver.basic.request.timeout = 5s\n");
    assertDoesNotThrow(() -> ShardTrainConfig.parseFile(other), "another library's settings");
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
  void aFractionWhereTheReferenceHasAWholeNumberIsRefused() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.batch = 64.5")));
    assertTrue(e.getMessage().startsWith("configuration key 'shardtrain.train.batch' must be a whole number, got 64.5"),
        e.getMessage());
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.batch = 64.0")));
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.lr = 0.5")), "a rate may be a fraction");
    var inList = assertThrows(IllegalArgumentException.class,
        () -> ShardTrainConfig.validate(with("shardtrain.train.hidden = [64, 32.5]")));
    assertTrue(inList.getMessage().startsWith(
        "configuration key 'shardtrain.train.hidden' must be a list of whole numbers, got [64,32.5]"), inList.getMessage());
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.hidden = [64, 32]")));
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.hidden = []")), "no hidden layer");
  }

  @Test
  void numericStringFromEnvironmentIsAccepted() {
    assertDoesNotThrow(() -> ShardTrainConfig.validate(with("shardtrain.train.batch = \"128\"")));
  }
}
