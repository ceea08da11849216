package io.shardtrain.actors.metrics;

import com.typesafe.config.Config;

/**
 * Settings of a node's metrics endpoint, read once from {@code shardtrain.metrics}. Port 0 means
 * the node serves no metrics and its meters cost nothing: a {@code local} run opens no port unless
 * told to.
 */
public record MetricsSettings(String host, int port, java.time.Duration retiredSeriesFor) {
  public MetricsSettings {
    if (host == null || host.isBlank()) throw new IllegalArgumentException("shardtrain.metrics.host must not be blank");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("shardtrain.metrics.port must be 0 (off) or a port up to 65535, got " + port);
    }
    if (retiredSeriesFor.isNegative()) {
      throw new IllegalArgumentException("shardtrain.metrics.retired-series-for must be >= 0, got " + retiredSeriesFor);
    }
  }

  /** The endpoint's host and port; a stopped block's series stay 5 minutes. */
  public MetricsSettings(String host, int port) {
    this(host, port, java.time.Duration.ofMinutes(5));
  }

  public boolean serves() {
    return port > 0;
  }

  public static MetricsSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.metrics");
    return new MetricsSettings(c.getString("host").trim(), c.getInt("port"), c.getDuration("retired-series-for"));
  }
}
