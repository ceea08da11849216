package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.security.SecuritySettings;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --security FILE}: turns on TLS and authentication ({@code shardtrain.security.enabled})
 * with the {@code shardtrain.security} settings in FILE, one of those scripts/make-certs.sh writes
 * ({@code NAME.conf} for a node, {@code client.conf} for the tools).
 */
final class SecurityOption {
  @Option(names = "--security", paramLabel = "FILE", description = "Turn on TLS and authentication with the "
      + "shardtrain.security settings in FILE (scripts/make-certs.sh writes NAME.conf per node and client.conf).")
  Path file;

  /** The file's {@code shardtrain.security.*} as flags, {@code enabled} on; empty without the option. */
  Map<String, Object> flags() {
    Map<String, Object> flags = new HashMap<>();
    if (file == null) return flags;
    Config c = ShardTrainConfig.parseFile(file, "security file").resolve();
    if (c.hasPath("shardtrain.security")) {
      c.getConfig("shardtrain.security").entrySet()
          .forEach(e -> flags.put("shardtrain.security." + e.getKey(), e.getValue().unwrapped()));
    }
    flags.put("shardtrain.security.enabled", true);
    return flags;
  }

  /** Whether security may be on without reading the configuration (the option or the environment). */
  boolean maybeOn() {
    return file != null || System.getenv("SHARDTRAIN_SECURITY") != null;
  }

  /** A client's settings: the option over {@code local} (null: the defaults are not needed, security off). */
  SecuritySettings settings(Config local) {
    if (local == null) return SecuritySettings.off();
    return SecuritySettings.fromConfig(ConfigFactory.parseMap(flags(), "--security " + file).withFallback(local));
  }
}
