package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;

/** A trainer's settings, read once from {@code shardtrain.trainer}. */
public record TrainerSettings(Duration askTimeout, Duration pullTimeout, Duration retryDelay) {
  public static TrainerSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static TrainerSettings fromConfig(Config config) {
    return new TrainerSettings(
        config.getDuration("shardtrain.trainer.ask-timeout"),
        config.getDuration("shardtrain.trainer.pull-timeout"),
        config.getDuration("shardtrain.trainer.retry-delay"));
  }
}
