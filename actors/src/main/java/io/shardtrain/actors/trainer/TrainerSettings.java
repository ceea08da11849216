package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;

/**
 * A trainer's settings, read once from {@code shardtrain.trainer}; {@code failureTimeout} sets how
 * often it tells the master it is alive (every third of it).
 */
public record TrainerSettings(Duration askTimeout, Duration pullTimeout, Duration retryDelay, Duration failureTimeout) {
  public static TrainerSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static TrainerSettings fromConfig(Config config) {
    return new TrainerSettings(
        config.getDuration("shardtrain.trainer.ask-timeout"),
        config.getDuration("shardtrain.trainer.pull-timeout"),
        config.getDuration("shardtrain.trainer.retry-delay"),
        config.getDuration("shardtrain.trainer.failure-timeout"));
  }

  /** How often the trainer sends the master a heartbeat. */
  public Duration heartbeatInterval() {
    return failureTimeout.dividedBy(3);
  }
}
