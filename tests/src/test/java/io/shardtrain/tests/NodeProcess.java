package io.shardtrain.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A ShardTrain node in a JVM of its own ({@code shardtrain node ...}), started from this test's
 * classpath, its output in a log file. {@link #kill()} is SIGKILL: no shutdown hook, no goodbye;
 * {@link #terminate()} is SIGTERM: the node leaves the cluster and hands its blocks over.
 */
final class NodeProcess implements AutoCloseable {
  private final String name;
  private final Process process;
  private final Path log;

  private NodeProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  static NodeProcess start(String name, Path logDir, List<String> env, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--add-modules", "jdk.incubator.vector", "-Xmx1g", "-XX:+UseSerialGC",
        "-cp", System.getProperty("java.class.path"),
        "io.shardtrain.samples.cli.ShardTrainCli"));
    cmd.addAll(List.of(args));
    Path log = logDir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    for (String kv : env) {
      int eq = kv.indexOf('=');
      pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    return new NodeProcess(name, pb.start(), log);
  }

  /** SIGKILL. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * SIGTERM, as Ctrl-C or {@code kill} sends it: the JVM's shutdown hook runs Akka's coordinated
   * shutdown (shard hand-off, cluster leave). Returns whether the JVM exited within {@code seconds}.
   */
  boolean terminate(long seconds) throws InterruptedException {
    process.destroy();
    return process.waitFor(seconds, TimeUnit.SECONDS);
  }

  boolean awaitExit(long seconds) throws InterruptedException {
    return process.waitFor(seconds, TimeUnit.SECONDS);
  }

  int exitCode() {
    return process.exitValue();
  }

  String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  String name() {
    return name;
  }

  /** SIGKILL without waiting: {@link NodeCluster#close()} ends all its nodes at once. */
  void killNow() {
    process.destroyForcibly();
  }

  /**
   * SIGKILL: a test's nodes are done with once it asserted, and a graceful leave of each in turn
   * (shard hand-off to nodes that leave next) took seconds per node.
   */
  @Override
  public void close() throws InterruptedException {
    kill();
  }
}
