package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import io.shardtrain.actors.transport.WirePrecision;
import java.time.Duration;

/**
 * A trainer's settings, read once from {@code shardtrain.trainer}; {@code failureTimeout} sets how
 * often it tells the master it is alive (every third of it). {@code gradientPrecision}
 * ({@code shardtrain.transport.gradient-precision}) is how its pushes carry gradients: trainers
 * are the only senders of gradients. {@code publishEvery}: in all-reduce mode, the steps between
 * two publications of the replica's values to the parameter blocks.
 */
public record TrainerSettings(Duration askTimeout, Duration pullTimeout, Duration retryDelay, Duration failureTimeout,
    WirePrecision gradientPrecision, int publishEvery) {
  public static TrainerSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static TrainerSettings fromConfig(Config config) {
    return new TrainerSettings(
        config.getDuration("shardtrain.trainer.ask-timeout"),
        config.getDuration("shardtrain.trainer.pull-timeout"),
        config.getDuration("shardtrain.trainer.retry-delay"),
        config.getDuration("shardtrain.trainer.failure-timeout"),
        WirePrecision.gradientsFromConfig(config),
        config.getInt("shardtrain.trainer.publish-every"));
  }

  public TrainerSettings {
    if (publishEvery < 1) {
      throw new IllegalArgumentException("shardtrain.trainer.publish-every must be >= 1, not " + publishEvery);
    }
  }

  /** How often the trainer sends the master a heartbeat. */
  public Duration heartbeatInterval() {
    return failureTimeout.dividedBy(3);
  }
}
