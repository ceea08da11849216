package io.shardtrain.actors.master;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import io.shardtrain.actors.ps.PsSettings;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Checkpoint settings, read once from {@code shardtrain.checkpoint} and {@code shardtrain.ps.durability}:
 * every how many sync steps the master takes one (0 = on demand only), where it writes them, how
 * long one may take, and whether a lost {@code ps} node rolls the job back to the last one.
 */
public record CheckpointSettings(long everySteps, Path dir, Duration timeout, PsSettings.Durability durability) {
  /** No periodic checkpoints, exact durability. */
  public static final CheckpointSettings OFF = new CheckpointSettings(0, Path.of("checkpoints"), Duration.ofSeconds(120),
      PsSettings.Durability.EXACT);

  public CheckpointSettings {
    if (everySteps < 0) {
      throw new IllegalArgumentException("shardtrain.checkpoint.every-steps must be >= 0 (0 = off), not " + everySteps);
    }
    if (timeout == null || timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("shardtrain.checkpoint.timeout must be a positive duration, not " + timeout);
    }
    if (dir == null) throw new IllegalArgumentException("shardtrain.checkpoint.dir must not be null");
    if (durability == null) throw new IllegalArgumentException("shardtrain.ps.durability must not be null");
  }

  public static CheckpointSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static CheckpointSettings fromConfig(Config config) {
    String dir = config.getString("shardtrain.checkpoint.dir").trim();
    return new CheckpointSettings(
        config.getLong("shardtrain.checkpoint.every-steps"),
        dir.isEmpty() ? Path.of(config.getString("shardtrain.data-dir"), "checkpoints") : Path.of(dir),
        config.getDuration("shardtrain.checkpoint.timeout"),
        PsSettings.fromConfig(config).durability());
  }

  public boolean checkpointDurability() {
    return durability == PsSettings.Durability.CHECKPOINT;
  }

  /** Where a checkpoint of {@code jobId} at {@code step} goes when no directory was asked for. */
  public Path defaultDir(String jobId, long step) {
    return dir.resolve(jobId).resolve("step-" + step);
  }
}
