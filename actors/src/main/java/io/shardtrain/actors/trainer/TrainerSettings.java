package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import io.shardtrain.actors.transport.WirePrecision;
import java.time.Duration;

/**
 * A trainer's settings, read once from {@code shardtrain.trainer}; {@code failureTimeout} sets how
 * often it tells the master it is alive (every third of it). {@code gradientPrecision}
 * ({@code shardtrain.transport.gradient-precision}) is how its pushes carry gradients: trainers
 * are the only senders of gradients.
 */
public record TrainerSettings(Duration askTimeout, Duration pullTimeout, Duration retryDelay, Duration failureTimeout,
    WirePrecision gradientPrecision) {
  public static TrainerSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static TrainerSettings fromConfig(Config config) {
    return new TrainerSettings(
        config.getDuration("shardtrain.trainer.ask-timeout"),
        config.getDuration("shardtrain.trainer.pull-timeout"),
        config.getDuration("shardtrain.trainer.retry-delay"),
        config.getDuration("shardtrain.trainer.failure-timeout"),
        WirePrecision.gradientsFromConfig(config));
  }

  /** How often the trainer sends the master a heartbeat. */
  public Duration heartbeatInterval() {
    return failureTimeout.dividedBy(3);
  }
}
