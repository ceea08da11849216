package io.shardtrain.actors.master;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;

/** The master's settings, read once from {@code shardtrain.master} and {@code shardtrain.trainer}. */
public record MasterSettings(Duration failureTimeout, Duration tick, Duration askTimeout, int snapshotEvery) {
  public static MasterSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static MasterSettings fromConfig(Config config) {
    return new MasterSettings(
        config.getDuration("shardtrain.trainer.failure-timeout"),
        config.getDuration("shardtrain.master.tick"),
        config.getDuration("shardtrain.master.ask-timeout"),
        config.getInt("shardtrain.master.snapshot-every"));
  }
}
