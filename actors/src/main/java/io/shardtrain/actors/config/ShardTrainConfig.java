package io.shardtrain.actors.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Loads the effective configuration and checks every {@code shardtrain.*} key against
 * {@code reference.conf}: a key the reference does not define, or a value of another type, fails
 * at start with the key's name instead of being silently ignored halfway through a job.
 */
public final class ShardTrainConfig {
  private ShardTrainConfig() {}

  /** A user's file: its includes of files must exist. */
  private static final ConfigParseOptions USER_FILE = ConfigParseOptions.defaults().setIncluder(new RequiredIncludes());

  /** application.conf (if any) over reference.conf, optionally under a user file, resolved and checked. */
  public static Config load(Path userFile) {
    Config base = ConfigFactory.load();
    Config config = base;
    if (userFile != null) {
      requireFile(userFile, "config file");
      Config file;
      try {
        file = ConfigFactory.parseFile(userFile.toFile(), USER_FILE);
        // Layered before resolving, so the file's values reach substitutions such as ${shardtrain.data-dir}.
        config = ConfigFactory.load(file);
      } catch (ConfigException e) {
        throw new IllegalArgumentException("config file " + userFile + ": " + e.getMessage(), e);
      }
      requireKnownRoots(userFile, "config file", file);
    }
    validate(config);
    return config;
  }

  private static void requireFile(Path file, String what) {
    if (Files.isDirectory(file)) throw new IllegalArgumentException(what + " " + file + " is a directory");
    if (!Files.isRegularFile(file)) throw new IllegalArgumentException(what + " " + file + " does not exist");
  }

  /** A HOCON config file, unresolved (to be layered), or a one-line error naming the file. */
  public static Config parseFile(Path file) {
    return parseFile(file, "config file");
  }

  /** The same for a file the error calls {@code what} ("job file"). */
  public static Config parseFile(Path file, String what) {
    requireFile(file, what);
    Config c;
    try {
      c = ConfigFactory.parseFile(file.toFile(), USER_FILE);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(what + " " + file + ": " + e.getMessage(), e);
    }
    requireKnownRoots(file, what, c);
    return c;
  }

  /**
   * A top-level key a letter or two off {@code shardtrain} or {@code akka} is a typo that would
   * leave the whole section unread: refused, naming it. Other roots (other libraries' settings) pass.
   */
  private static void requireKnownRoots(Path file, String what, Config c) {
    java.util.Set<String> sections = ConfigFactory.defaultReference().getObject("shardtrain").keySet();
    for (Map.Entry<String, ConfigValue> e : c.root().entrySet()) {
      String root = e.getKey();
      if (root.equals("shardtrain") || root.equals("akka")) continue;
      if (sections.contains(root)) {
        // A section of shardtrain's written without its prefix would go unread: the job would run on defaults.
        throw new IllegalArgumentException(what + " " + file + ": unknown top-level key '" + root + "' ("
            + origin(e.getValue()) + "); did you mean 'shardtrain." + root + "'?");
      }
      List<String> near = Spelling.closest(root, List.of("shardtrain", "akka"));
      if (!near.isEmpty()) {
        throw new IllegalArgumentException(what + " " + file + ": unknown top-level key '" + root + "' ("
            + origin(e.getValue()) + "); did you mean '" + near.get(0) + "'?");
      }
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
            + origin(e.getValue()) + ")" + guess(reference, key));
      }
      ConfigValue inReference = reference.getValue(key);
      ConfigValueType expected = inReference.valueType();
      ConfigValueType actual = e.getValue().valueType();
      if (isWhole(inReference) && hasFraction(e.getValue())) {
        // Typesafe's getInt would drop the fraction without a word.
        throw new IllegalArgumentException("configuration key '" + key + "' must be a whole number, got "
            + e.getValue().render() + " (" + origin(e.getValue()) + ")");
      }
      if (inReference instanceof ConfigList list && !list.isEmpty() && list.stream().allMatch(ShardTrainConfig::isWhole)
          && e.getValue() instanceof ConfigList got && got.stream().anyMatch(ShardTrainConfig::hasFraction)) {
        throw new IllegalArgumentException("configuration key '" + key + "' must be a list of whole numbers, got "
            + e.getValue().render(ConfigRenderOptions.concise()) + " (" + origin(e.getValue()) + ")");
      }
      if (!compatible(expected, actual, e.getValue())) {
        throw new IllegalArgumentException("configuration key '" + key + "' must be "
            + expected.name().toLowerCase() + ", got " + actual.name().toLowerCase() + " "
            + e.getValue().render() + " (" + origin(e.getValue()) + ")");
      }
    }
  }

  /** "; did you mean 'a.b.c'?" for the nearest keys beside {@code key} in the reference, or "". */
  private static String guess(Config reference, String key) {
    int dot = key.lastIndexOf('.');
    String parent = key.substring(0, dot);
    // The deepest part of the key the reference has: a misspelt section, or a misspelt key in one.
    while (!reference.hasPath(parent) && parent.contains(".")) {
      key = parent;
      dot = key.lastIndexOf('.');
      parent = key.substring(0, dot);
    }
    if (!reference.hasPath(parent) || reference.getValue(parent).valueType() != ConfigValueType.OBJECT) return "";
    List<String> near = Spelling.closest(key.substring(dot + 1), reference.getObject(parent).keySet());
    if (near.isEmpty()) return "";
    String section = parent;
    return "; did you mean " + String.join(" or ", near.stream().map(n -> "'" + section + "." + n + "'").toList())
        + "?";
  }

  private static boolean hasFraction(ConfigValue v) {
    return v.unwrapped() instanceof Double d && d != Math.rint(d);
  }

  private static boolean isWhole(ConfigValue v) {
    return v.unwrapped() instanceof Integer || v.unwrapped() instanceof Long;
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
