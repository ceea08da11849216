package io.shardtrain.actors.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Loads the effective configuration and checks every {@code shardtrain.*} key against
 * {@code reference.conf}: a key the reference does not define, or a value of another type, fails
 * at start with the key's name instead of being silently ignored halfway through a job.
 */
public final class ShardTrainConfig {
  private ShardTrainConfig() {}

  /** application.conf (if any) over reference.conf, optionally under a user file, resolved and checked. */
  public static Config load(Path userFile) {
    Config base = ConfigFactory.load();
    Config config = base;
    if (userFile != null) {
      requireFile(userFile);
      try {
        // Layered before resolving, so the file's values reach substitutions such as ${shardtrain.data-dir}.
        config = ConfigFactory.load(ConfigFactory.parseFile(userFile.toFile()));
      } catch (ConfigException e) {
        throw new IllegalArgumentException("config file " + userFile + ": " + e.getMessage(), e);
      }
    }
    validate(config);
    return config;
  }

  private static void requireFile(Path file) {
    if (Files.isDirectory(file)) throw new IllegalArgumentException("config file " + file + " is a directory");
    if (!Files.isRegularFile(file)) throw new IllegalArgumentException("config file " + file + " does not exist");
  }

  /** A HOCON file, unresolved (to be layered), or a one-line error naming the file. */
  public static Config parseFile(Path file) {
    requireFile(file);
    try {
      return ConfigFactory.parseFile(file.toFile());
    } catch (ConfigException e) {
      throw new IllegalArgumentException("config file " + file + ": " + e.getMessage(), e);
    }
  }

  /** Throws {@link IllegalArgumentException} naming the first unknown or ill-typed shardtrain key. */
  public static void validate(Config config) {
    Config reference = ConfigFactory.defaultReference();
    if (!config.hasPath("shardtrain")) return;
    for (Map.Entry<String, ConfigValue> e : config.getConfig("shardtrain").entrySet()) {
      String key = "shardtrain." + e.getKey();
      if (!reference.hasPath(key)) {
        throw new IllegalArgumentException("unknown configuration key '" + key + "' ("
            + origin(e.getValue()) + ")");
      }
      ConfigValueType expected = reference.getValue(key).valueType();
      ConfigValueType actual = e.getValue().valueType();
      if (!compatible(expected, actual, e.getValue())) {
        throw new IllegalArgumentException("configuration key '" + key + "' must be "
            + expected.name().toLowerCase() + ", got " + actual.name().toLowerCase() + " "
            + e.getValue().render() + " (" + origin(e.getValue()) + ")");
      }
    }
  }

  private static boolean compatible(ConfigValueType expected, ConfigValueType actual, ConfigValue v) {
    if (expected == actual) return true;
    // HOCON values from environment variables and -D flags arrive as strings: accept those that parse.
    if (actual == ConfigValueType.STRING) {
      String s = String.valueOf(v.unwrapped()).trim();
      if (expected == ConfigValueType.NUMBER) {
        try {
          Double.parseDouble(s);
          return true;
        } catch (NumberFormatException ex) {
          return false;
        }
      }
      if (expected == ConfigValueType.BOOLEAN) {
        return s.matches("(?i)true|false|yes|no|on|off");
      }
    }
    // Durations and sizes are strings in reference.conf but may be written as numbers.
    return expected == ConfigValueType.STRING && actual == ConfigValueType.NUMBER;
  }

  private static String origin(ConfigValue v) {
    return v.origin() == null ? "unknown origin" : v.origin().description();
  }
}
