package io.shardtrain.samples.cli;

import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.JobSubmitter;
import io.shardtrain.samples.cluster.ManagementSettings;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.cluster.TrainerNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code shardtrain node}: one node of a cluster, in this JVM, until it is stopped. */
@Command(name = "node", mixinStandardHelpOptions = true,
    description = "Run one cluster node (one JVM) with the given roles; stop it with Ctrl-C or SIGTERM.")
final class NodeCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Option(names = "--roles", defaultValue = "ps,trainer,master",
      description = "Comma-separated roles: ps, trainer, master, or client (a member that holds no block and runs no"
          + " trainer) (default: ${DEFAULT-VALUE}).")
  String roles;
  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address this node binds and is reached at.")
  String host;
  @Option(names = "--port", defaultValue = "25520",
      description = "Akka port (default: ${DEFAULT-VALUE}; 0: a free one, and without --seeds the node joins itself).")
  int port;
  @Option(names = "--seeds", description = "Seed nodes HOST:PORT,HOST:PORT (default: this node).")
  String seeds;
  @Option(names = "--journal", description = "Journal: jdbc:postgresql://HOST/DB, jdbc:h2:PATH or memory "
      + "(default: shardtrain.persistence.journal, a log of files in <data-dir>/journal/log that one JVM holds).")
  String journal;
  @Option(names = "--config", paramLabel = "FILE", description = "HOCON file layered under the flags.")
  Path config;
  @Option(names = "--job", paramLabel = "FILE", description = "Submit this job (HOCON, shardtrain.train.*) once the"
      + " cluster is up; without a job-id in it, the job is named after the file (job.conf: job).")
  Path job;
  @Option(names = "--join", paramLabel = "JOB_ID", description = "Train job JOB_ID only (default: each running"
      + " job, oldest first, one after another, then wait for the next).")
  String join;
  @Option(names = "--trainer-id", description = "Stable trainer id (default: HOST:PORT), so a restart resumes.")
  String trainerId;
  @Option(names = "--data-dir", description = "Where data sets are cached.")
  Path dataDir;
  @Option(names = "--compute-threads", description = "GEMM threads of this node's trainer.")
  Integer computeThreads;
  @Option(names = "--grpc-port", description = "Serve the gRPC API on this port (shardtrain.grpc.port; 0: a free one)."
      + " It binds shardtrain.grpc.host, loopback by default.")
  Integer grpcPort;
  @Option(names = "--metrics-port", description = "Serve metrics in Prometheus' text format at /metrics on this port"
      + " (shardtrain.metrics.port; 0: none). It binds shardtrain.metrics.host, loopback by default.")
  Integer metricsPort;
  @Option(names = "--management-port", description = "Serve Akka Management (/ready, /alive, Cluster Bootstrap) on"
      + " this port (shardtrain.management.port; 0: none). It binds shardtrain.management.host, loopback by default.")
  Integer managementPort;
  @Option(names = "--discovery", paramLabel = "METHOD", description = "Join through Cluster Bootstrap instead of"
      + " seed nodes: config (with --contact-points) or kubernetes-api (shardtrain.management.discovery).")
  String discovery;
  @Option(names = "--contact-points", paramLabel = "HOST:PORT,...", description = "The nodes' management"
      + " endpoints, for --discovery config; the lowest-addressed forms the cluster once all answer.")
  String contactPoints;
  @Option(names = "--exit-when-done", description = "Stop this node when its trainer has finished (its first job).")
  boolean exitWhenDone;
  @picocli.CommandLine.Mixin
  SecurityOption security = new SecurityOption();

  private static final Duration NOT_JOINED_WARNING = Duration.ofSeconds(30);

  @Override
  public Integer call() throws Exception {
    if (port < 0 || port > 65535) throw new IllegalArgumentException("--port must be from 0 to 65535, got " + port);
    List<String> roleList = Arrays.stream(roles.split(",")).map(String::trim).filter(r -> !r.isEmpty()).toList();
    List<String> seedList = seeds == null ? List.of()
        : Arrays.stream(seeds.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
    Map<String, Object> flags = new HashMap<>();
    if (dataDir != null) flags.put("shardtrain.data-dir", dataDir.toAbsolutePath().toString());
    if (computeThreads != null) flags.put("shardtrain.compute.threads", computeThreads);
    if (grpcPort != null) flags.put("shardtrain.grpc.port", grpcPort);
    if (metricsPort != null) flags.put("shardtrain.metrics.port", metricsPort);
    if (managementPort != null) flags.put("shardtrain.management.port", managementPort);
    if (discovery != null) flags.put("shardtrain.management.discovery", discovery);
    flags.putAll(security.flags());
    List<String> contacts = contactPoints == null ? List.of()
        : Arrays.stream(contactPoints.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
    Config nodeConfig = NodeConfig.build(roleList, host, port, seedList, contacts, journal, config, flags);
    Config jobConfig = null;
    if (job != null) {
      jobConfig = ConfigFactory.parseMap(flags).withFallback(ShardTrainConfig.parseFile(job, "job file"))
          .withFallback(nodeConfig).resolve();
      ShardTrainConfig.validate(jobConfig);
      TrainSettings.fromConfig(jobConfig);
      if (jobConfig.getString("shardtrain.train.job-id").isBlank()) {
        // A restarted node submits its job again: the same id makes that the same job, not a second one.
        jobConfig = ConfigFactory.parseMap(Map.of("shardtrain.train.job-id", jobIdOf(job))).withFallback(jobConfig);
      }
    }
    // A trainer's settings are read before the node starts, so a bad one fails before it joins.
    TrainSettings trainSettings = roleList.contains("trainer") ? TrainSettings.fromConfig(nodeConfig) : null;
    if (trainSettings != null) {
      TrainingFlags.oversubscribed(trainSettings.computeThreads(), 1, trainSettings.backend())
          .ifPresent(spec.commandLine().getErr()::println);
    }
    var out = spec.commandLine().getOut();
    ClusterNode.Started node = ClusterNode.start(nodeConfig);
    shutDownBeforeTheJvmsHooks(node.system());
    List<String> seedNodes = nodeConfig.getStringList("akka.cluster.seed-nodes");
    // The bound port: with --port 0 Artery chose it.
    int boundPort = node.system().address().getPort().orElse(port);
    String self = "node akka://" + NodeConfig.SYSTEM_NAME + "@" + host + ":" + boundPort;
    out.printf("%s started with roles %s; joining %s%n", self, roleList,
        !seedNodes.isEmpty() ? "seeds " + seedNodes
            : ManagementSettings.fromConfig(nodeConfig).bootstraps()
                ? "by Cluster Bootstrap (" + nodeConfig.getString("shardtrain.management.discovery") + " discovery)"
                : "itself (its own seed)");
    // "Up" only once the cluster says so: scripts and tests wait for this line.
    akka.cluster.Cluster.get(akka.actor.typed.javadsl.Adapter.toClassic(node.system())).registerOnMemberUp(() -> {
      out.printf("%s up with roles %s%n", self, roleList);
      out.flush();
    });
    MemberLines.start(node.system(), out);
    if (node.grpcPort() >= 0) {
      out.printf("gRPC API at %s:%d%n", node.system().settings().config().getString("shardtrain.grpc.host"),
          node.grpcPort());
    }
    if (node.metricsPort() > 0) {
      out.printf("metrics at http://%s:%d/metrics%n", node.system().settings().config().getString("shardtrain.metrics.host"),
          node.metricsPort());
    }
    if (node.managementPort() > 0) {
      out.printf("management at http://%s:%d (/ready, /alive)%n",
          node.system().settings().config().getString("shardtrain.management.host"), node.managementPort());
    }
    out.flush();
    warnIfNotJoined(node.system(), spec.commandLine().getErr());
    if (jobConfig != null) {
      ClusterNode.awaitUp(node.system(), Duration.ofMinutes(2));
      JobSpec submitted = JobSubmitter.submit(node.api(), jobConfig, Duration.ofMinutes(2));
      out.printf("job %s submitted: %s mode, %s, %s%n", submitted.jobId(), submitted.mode().name().toLowerCase(),
          count(submitted.trainers(), "trainer"), count(submitted.blocks().size(), "parameter block"));
      out.flush();
    }
    if (roleList.contains("trainer")) {
      String id = trainerId != null ? trainerId : host + ":" + boundPort;
      var finished = TrainerNode.start(node.api(), id, trainSettings, System.out, join);
      if (exitWhenDone) {
        finished.whenComplete((steps, failure) -> node.system().terminate());
      }
    }
    node.system().getWhenTerminated().toCompletableFuture().join();
    return 0;
  }

  /**
   * SIGTERM and Ctrl-C run Akka's coordinated shutdown to its end (the blocks' hand-off, the
   * journal's last writes) before the JVM's shutdown hooks: run side by side, as the JVM runs its
   * hooks, an H2 auto-server's own hook closes the journal file under the hand-off's writes. The
   * node's main thread then returns as the system terminates. A second signal exits at once.
   */
  private static void shutDownBeforeTheJvmsHooks(ActorSystem<?> system) {
    java.util.concurrent.atomic.AtomicBoolean asked = new java.util.concurrent.atomic.AtomicBoolean();
    for (String name : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> {
        if (asked.getAndSet(true)) System.exit(128 + signal.getNumber());
        CoordinatedShutdown.get(system).run(CoordinatedShutdown.jvmExitReason());
      });
    }
  }

  /**
   * A node that cannot join keeps trying, quietly but for Akka's log: say so once after a while,
   * with the usual causes. A TLS mismatch with the seed (security on one side only, another CA, an
   * expired certificate) shows nowhere else on this side.
   */
  private static void warnIfNotJoined(ActorSystem<?> system, java.io.PrintWriter err) {
    Thread t = new Thread(() -> {
      try {
        ClusterNode.awaitUp(system, NOT_JOINED_WARNING);
      } catch (IllegalStateException e) {
        err.println("shardtrain: " + e.getMessage() + " Still trying; a node whose shardtrain.security differs"
            + " from the cluster's (on one side only, another CA, an expired certificate) fails its TLS handshakes");
        err.flush();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "shardtrain-join-watch");
    t.setDaemon(true);
    t.start();
  }

  /** The job id of a job file without one: its name without the extension. */
  static String jobIdOf(Path file) {
    String name = file.getFileName().toString();
    int dot = name.lastIndexOf('.');
    return dot > 0 ? name.substring(0, dot) : name;
  }

  /** "1 trainer", "2 trainers". */
  static String count(int n, String thing) {
    return n + " " + thing + (n == 1 ? "" : "s");
  }
}
