package io.shardtrain.tests;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;

/** Settings and quiet reporting for tests that run jobs on a local cluster. */
final class ClusterTestSupport {
  private ClusterTestSupport() {}

  /** The effective configuration with {@code hocon} over the defaults (memory journal unless set). */
  static Config config(String hocon) {
    return ConfigFactory.parseString(hocon)
        .withFallback(ConfigFactory.parseString("shardtrain.persistence.journal = memory"))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  static TrainSettings settings(Config config) {
    return TrainSettings.fromConfig(config);
  }

  static ProgressBar quiet() {
    return ProgressBar.messagesOnly(System.out);
  }

  static MetricsLog metrics() {
    return new MetricsLog();
  }
}
