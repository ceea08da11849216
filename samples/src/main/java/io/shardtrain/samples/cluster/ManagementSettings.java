package io.shardtrain.samples.cluster;

import com.typesafe.config.Config;
import java.util.List;

/**
 * Settings of a node's Akka Management endpoint and Cluster Bootstrap, read once from
 * {@code shardtrain.management}. Port 0 means no endpoint and no Bootstrap: the node joins
 * {@code akka.cluster.seed-nodes}.
 */
public record ManagementSettings(String host, int port, String discovery, String serviceName,
    int requiredContactPoints) {
  /** The discovery methods Bootstrap may use ("" is none: seed nodes). */
  public static final List<String> DISCOVERY_METHODS = List.of("", "config", "kubernetes-api");

  public ManagementSettings {
    if (host == null || host.isBlank()) throw new IllegalArgumentException("shardtrain.management.host must not be blank");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("shardtrain.management.port must be 0 (off) or a port up to 65535, got " + port);
    }
    if (!DISCOVERY_METHODS.contains(discovery)) {
      throw new IllegalArgumentException("shardtrain.management.discovery must be \"\", config or kubernetes-api, got '"
          + discovery + "'");
    }
    // Bootstrap's contact points are other nodes' management endpoints: it cannot run without one.
    if (!discovery.isEmpty() && port == 0) {
      throw new IllegalArgumentException("shardtrain.management.discovery = " + discovery
          + " needs shardtrain.management.port (--management-port)");
    }
    if (serviceName == null || serviceName.isBlank()) {
      throw new IllegalArgumentException("shardtrain.management.service-name must not be blank");
    }
    if (requiredContactPoints < 1) {
      throw new IllegalArgumentException("shardtrain.management.required-contact-points must be at least 1, got "
          + requiredContactPoints);
    }
  }

  public boolean serves() {
    return port > 0;
  }

  public boolean bootstraps() {
    return !discovery.isEmpty();
  }

  public static ManagementSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.management");
    return new ManagementSettings(c.getString("host").trim(), c.getInt("port"), c.getString("discovery").trim(),
        c.getString("service-name").trim(), c.getInt("required-contact-points"));
  }
}
