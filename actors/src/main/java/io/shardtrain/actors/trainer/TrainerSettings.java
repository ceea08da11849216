package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import io.shardtrain.actors.transport.WirePrecision;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A trainer's settings, read once from {@code shardtrain.trainer}; {@code failureTimeout} sets how
 * often it tells the master it is alive (every third of it). {@code gradientPrecision}
 * ({@code shardtrain.transport.gradient-precision}) is how its pushes carry gradients: trainers
 * are the only senders of gradients. {@code publishEvery}: in all-reduce mode, the steps between
 * two publications of the replica's values to the parameter blocks; {@code checkpointEvery}: the
 * steps between two checkpoints of the replica (0: none) into {@code checkpointDir}
 * ({@code shardtrain.checkpoint.dir}, else {@code <data-dir>/checkpoints}), from which a ring whose
 * members all died resumes.
 */
public record TrainerSettings(Duration askTimeout, Duration pullTimeout, Duration resendAfter, Duration retryDelay,
    Duration failureTimeout, WirePrecision gradientPrecision, int publishEvery, long checkpointEvery, Path checkpointDir) {
  public static TrainerSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static TrainerSettings fromConfig(Config config) {
    return new TrainerSettings(
        config.getDuration("shardtrain.trainer.ask-timeout"),
        config.getDuration("shardtrain.trainer.pull-timeout"),
        config.getDuration("shardtrain.trainer.resend-after"),
        config.getDuration("shardtrain.trainer.retry-delay"),
        config.getDuration("shardtrain.trainer.failure-timeout"),
        WirePrecision.gradientsFromConfig(config),
        config.getInt("shardtrain.trainer.publish-every"),
        config.getLong("shardtrain.trainer.checkpoint-every"),
        checkpointDir(config));
  }

  public TrainerSettings {
    if (resendAfter.isNegative() || resendAfter.isZero()) {
      throw new IllegalArgumentException("shardtrain.trainer.resend-after must be positive, not " + resendAfter);
    }
    if (publishEvery < 1) {
      throw new IllegalArgumentException("shardtrain.trainer.publish-every must be >= 1, not " + publishEvery);
    }
    if (checkpointEvery < 0) {
      throw new IllegalArgumentException("shardtrain.trainer.checkpoint-every must be >= 0 (0 = off), not "
          + checkpointEvery);
    }
  }

  /** Where checkpoints go: the master's sync checkpoints and the ring's replicas alike. */
  private static Path checkpointDir(Config config) {
    String dir = config.getString("shardtrain.checkpoint.dir").trim();
    return dir.isEmpty() ? Path.of(config.getString("shardtrain.data-dir"), "checkpoints") : Path.of(dir);
  }

  /** How often the trainer looks for requests that lag their step's other answers ({@code resendAfter}). */
  public Duration lateAnswersInterval() {
    return resendAfter.dividedBy(2);
  }

  /** How often the trainer sends the master a heartbeat. */
  public Duration heartbeatInterval() {
    return failureTimeout.dividedBy(3);
  }
}
