package io.shardtrain.actors.grpc;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;

/**
 * Settings of the gRPC API, read once from {@code shardtrain.grpc}. A negative {@code port} means
 * this node does not serve it; 0 binds a free port. {@code compressResponses}: gzip the answers of
 * clients that accept it (akka-grpc's own choice whenever gzip comes first in what a client
 * accepts, as with gRPC's Java client); off by default, since floats hardly compress and gzip
 * costs milliseconds a call.
 */
public record GrpcSettings(String host, int port, Duration askTimeout, boolean compressResponses) {
  public GrpcSettings(String host, int port, Duration askTimeout) {
    this(host, port, askTimeout, false);
  }

  public GrpcSettings {
    if (host == null || host.isBlank()) throw new IllegalArgumentException("shardtrain.grpc.host must not be blank");
    if (port > 65535) throw new IllegalArgumentException("shardtrain.grpc.port must be at most 65535, got " + port);
    if (askTimeout.isNegative() || askTimeout.isZero()) {
      throw new IllegalArgumentException("shardtrain.grpc.ask-timeout must be positive, got " + askTimeout);
    }
  }

  public boolean serves() {
    return port >= 0;
  }

  public static GrpcSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static GrpcSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.grpc");
    return new GrpcSettings(c.getString("host").trim(), c.getInt("port"), c.getDuration("ask-timeout"),
        c.getBoolean("compress-responses"));
  }
}
