package io.shardtrain.actors.transport;

import com.typesafe.config.Config;
import java.time.Duration;

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
    long maxUnclaimedFloats,
    Duration claimTimeout,
    int minFloats) {

  public BulkSettings {
    if (host == null) throw new IllegalArgumentException("host must not be null (use \"\" for the default)");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.port must be in 0..65535, got " + port);
    }
    if (maxFloats < 1) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.max-floats must be at least 1, got " + maxFloats);
    }
    if (maxUnclaimedFloats < maxFloats) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.max-unclaimed-floats (" + maxUnclaimedFloats
          + ") must be at least max-floats (" + maxFloats + ")");
    }
    if (claimTimeout == null || claimTimeout.isNegative() || claimTimeout.isZero()) {
      throw new IllegalArgumentException("shardtrain.transport.bulk.claim-timeout must be positive, got " + claimTimeout);
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
        c.getLong("max-unclaimed-floats"),
        c.getDuration("claim-timeout"),
        c.getInt("min-floats"));
  }
}
