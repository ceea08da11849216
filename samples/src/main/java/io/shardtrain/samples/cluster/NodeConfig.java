package io.shardtrain.samples.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.persistence.journal.JournalConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration of one cluster node from command-line flags, layered: flags over the user's
 * file over {@code cluster.conf} over the defaults, then the journal's persistence layer; with
 * {@code shardtrain.security.enabled}, Artery over TLS ({@link SecuritySettings#withArtery}).
 */
public final class NodeConfig {
  public static final String SYSTEM_NAME = "shardtrain";

  private NodeConfig() {}

  /** "host:port" to an Akka address of this cluster's system. */
  public static String seedAddress(String hostPort) {
    String[] hp = splitHostPort("seed node", hostPort);
    return "akka://" + SYSTEM_NAME + "@" + hp[0] + ":" + hp[1];
  }

  /** {@code hostPort} as host and port, or an error naming {@code what} it is (a seed node, a contact point). */
  static String[] splitHostPort(String what, String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0 || colon == hostPort.length() - 1) {
      throw new IllegalArgumentException(what + " '" + hostPort + "': expected HOST:PORT");
    }
    String port = hostPort.substring(colon + 1);
    try {
      int p = Integer.parseInt(port);
      if (p < 0 || p > 65535) throw new NumberFormatException();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("port in '" + hostPort + "' is not a number from 0 to 65535");
    }
    return new String[] {hostPort.substring(0, colon), port};
  }

  /**
   * @param roles   akka.cluster.roles of this node (ps, trainer, master, client)
   * @param seeds   HOST:PORT of seed nodes; empty: this node is its own seed (on port 0, a free
   *                one, it joins its own address once bound: {@link ClusterNode#start}), unless
   *                {@code shardtrain.management.discovery} names a Cluster Bootstrap method
   * @param journal a JDBC URL, "memory", or null for the configured journal
   */
  public static Config build(List<String> roles, String host, int port, List<String> seeds, String journal,
      Path userFile, Map<String, Object> shardtrainFlags) {
    return build(roles, host, port, seeds, List.of(), journal, userFile, shardtrainFlags);
  }

  /**
   * As above; {@code contactPoints}: HOST:PORT of the nodes' management endpoints, which config
   * discovery lists as the service {@code shardtrain.management.service-name} (empty: none given).
   */
  public static Config build(List<String> roles, String host, int port, List<String> seeds,
      List<String> contactPoints, String journal, Path userFile, Map<String, Object> shardtrainFlags) {
    for (String r : roles) {
      if (!List.of("ps", "trainer", "master", "client").contains(r)) {
        throw new IllegalArgumentException("unknown role '" + r + "': expected ps, trainer, master or client");
      }
    }
    Map<String, Object> flags = new HashMap<>(shardtrainFlags);
    flags.put("akka.cluster.roles", roles);
    flags.put("akka.remote.artery.canonical.hostname", host);
    flags.put("akka.remote.artery.canonical.port", port);
    Config layered = ConfigFactory.parseMap(flags, "command-line flags");
    if (journal != null) {
      layered = layered.withFallback(journal.equals("memory")
          ? ConfigFactory.parseMap(Map.of("shardtrain.persistence.journal", "memory"))
          : JournalConfig.forUrl(journal));
    }
    if (userFile != null) layered = layered.withFallback(ShardTrainConfig.parseFile(userFile));
    // Unresolved until the reference joins it (ConfigFactory.load(config)): a --data-dir or a data-dir
    // in the user's file then moves the journal's default paths (h2-path, log-dir) with it.
    Config full = layered.withFallback(ConfigFactory.parseResources("cluster.conf"));
    full = ConfigFactory.parseMap(joining(ConfigFactory.load(full), host, port, seeds, contactPoints),
        "command-line flags").withFallback(full);
    Config resolved = JournalConfig.of(full);
    ShardTrainConfig.validate(resolved);
    return SecuritySettings.withArtery(resolved);
  }

  /** How the node joins: seed nodes, or Cluster Bootstrap through the management endpoint. */
  private static Map<String, Object> joining(Config full, String host, int port, List<String> seeds,
      List<String> contactPoints) {
    ManagementSettings m = ManagementSettings.fromConfig(full);
    Map<String, Object> join = new HashMap<>();
    if (m.serves()) {
      join.put("akka.management.http.hostname", m.host());
      join.put("akka.management.http.port", m.port());
    }
    if (!m.bootstraps()) {
      if (!contactPoints.isEmpty()) {
        throw new IllegalArgumentException("contact points are for Cluster Bootstrap: set --discovery config");
      }
      List<String> seedNodes = new ArrayList<>();
      for (String s : seeds) seedNodes.add(seedAddress(s));
      // A node on port 0 cannot name its own address before Artery binds one: it joins itself then.
      if (seedNodes.isEmpty() && port != 0) seedNodes.add("akka://" + SYSTEM_NAME + "@" + host + ":" + port);
      join.put("akka.cluster.seed-nodes", seedNodes);
      return join;
    }
    // Bootstrap joins (or forms) the cluster itself; a seed list would bypass it.
    if (!seeds.isEmpty()) throw new IllegalArgumentException("give either seed nodes or a discovery method, not both");
    join.put("akka.cluster.seed-nodes", List.of());
    String boot = "akka.management.cluster.bootstrap.contact-point-discovery.";
    join.put(boot + "discovery-method", m.discovery());
    join.put(boot + "service-name", m.serviceName());
    join.put(boot + "required-contact-point-nr", m.requiredContactPoints());
    // Contact points are whatever discovery lists: on one machine their ports differ from this
    // node's own management port, which Bootstrap's default filter would drop.
    join.put("akka.management.cluster.bootstrap.contact-point.filter-on-fallback-port", false);
    if (!contactPoints.isEmpty()) {
      if (!m.discovery().equals("config")) {
        throw new IllegalArgumentException("contact points are listed for config discovery, not " + m.discovery());
      }
      List<Map<String, Object>> endpoints = new ArrayList<>();
      for (String c : contactPoints) {
        String[] hp = splitHostPort("contact point", c);
        endpoints.add(Map.of("host", hp[0], "port", Integer.parseInt(hp[1])));
      }
      join.put("akka.discovery.config.services." + m.serviceName() + ".endpoints", endpoints);
    }
    return join;
  }
}
