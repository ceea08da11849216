package io.shardtrain.samples.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.persistence.journal.JournalConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The configuration of one cluster node from command-line flags, layered: flags over the user's
 * file over {@code cluster.conf} over the defaults, then the journal's persistence layer.
 */
public final class NodeConfig {
  public static final String SYSTEM_NAME = "shardtrain";

  private NodeConfig() {}

  /** "host:port" to an Akka address of this cluster's system. */
  public static String seedAddress(String hostPort) {
    String[] hp = splitHostPort(hostPort);
    return "akka://" + SYSTEM_NAME + "@" + hp[0] + ":" + hp[1];
  }

  static String[] splitHostPort(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0 || colon == hostPort.length() - 1) {
      throw new IllegalArgumentException("expected HOST:PORT, got '" + hostPort + "'");
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
   * @param seeds   HOST:PORT of seed nodes; empty: this node is its own seed
   * @param journal a JDBC URL, "memory", or null for the configured journal
   */
  public static Config build(List<String> roles, String host, int port, List<String> seeds, String journal,
      Path userFile, Map<String, Object> shardtrainFlags) {
    for (String r : roles) {
      if (!List.of("ps", "trainer", "master", "client").contains(r)) {
        throw new IllegalArgumentException("unknown role '" + r + "': expected ps, trainer, master or client");
      }
    }
    Map<String, Object> flags = new HashMap<>(shardtrainFlags);
    flags.put("akka.cluster.roles", roles);
    flags.put("akka.remote.artery.canonical.hostname", host);
    flags.put("akka.remote.artery.canonical.port", port);
    List<String> seedNodes = new ArrayList<>();
    for (String s : seeds) seedNodes.add(seedAddress(s));
    if (seedNodes.isEmpty()) seedNodes.add("akka://" + SYSTEM_NAME + "@" + host + ":" + port);
    flags.put("akka.cluster.seed-nodes", seedNodes);
    Config layered = ConfigFactory.parseMap(flags, "command-line flags");
    if (journal != null) {
      layered = layered.withFallback(journal.equals("memory")
          ? ConfigFactory.parseMap(Map.of("shardtrain.persistence.journal", "memory"))
          : JournalConfig.forUrl(journal));
    }
    if (userFile != null) layered = layered.withFallback(ShardTrainConfig.parseFile(userFile));
    Config full = layered.withFallback(ConfigFactory.parseResources("cluster.conf")).withFallback(ConfigFactory.load());
    Config resolved = JournalConfig.of(full);
    ShardTrainConfig.validate(resolved);
    return resolved;
  }
}
