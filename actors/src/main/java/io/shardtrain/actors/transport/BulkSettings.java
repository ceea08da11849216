package io.shardtrain.actors.transport;

import com.typesafe.config.Config;

/**
 * Settings of the bulk data channel, read once from {@code shardtrain.transport.bulk}. An empty
 * {@code host} means "use the ActorSystem's canonical hostname" and is resolved by
 * {@link BulkTransport}. Payloads under {@code minFloats} floats travel inline.
 */
public record BulkSettings(
    boolean enabled,
    String host,
    int port,
    int maxFloats,
    int minFloats) {

  public BulkSettings {
    if (host == null) throw new IllegalArgumentException("host must not be null (use \"\" for the default)");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.port must be in 0..65535, got " + port);
    }
    if (maxFloats < 1) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.max-floats must be at least 1, got " + maxFloats);
    }
    if (minFloats < 0) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.min-floats must be >= 0, got " + minFloats);
    }
  }

  /** Whether a payload of {@code floats} floats goes over the bulk channel rather than inline. */
  public boolean carries(int floats) {
    return enabled && floats >= minFloats && floats <= maxFloats;
  }

  public static BulkSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.transport.bulk");
    return new BulkSettings(
        c.getBoolean("enabled"),
        c.getString("host").trim(),
        c.getInt("port"),
        c.getInt("max-floats"),
        c.getInt("min-floats"));
  }
}
