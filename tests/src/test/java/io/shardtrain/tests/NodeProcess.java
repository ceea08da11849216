package io.shardtrain.tests;

import io.shardtrain.samples.testing.FreePorts;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

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

  /**
   * Starts a node JVM; if {@code joining}, at a higher CPU priority ({@code nice -n -10}) until it
   * is up: a JVM that joins a running job starts beside the job's JVMs, which keep two cores busy,
   * and took three times as long to be up as the first ones, which start on idle cores. Once up it
   * trains at the normal priority, as the others. Without the right to raise a priority (root's,
   * here) or without {@code nice} and {@code renice}, it starts at the normal one.
   */
  static NodeProcess start(String name, Path logDir, List<String> env, boolean joining, String... args)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    if (joining && NICE != null && RENICE != null) cmd.addAll(List.of(NICE.toString(), "-n", "-10"));
    cmd.addAll(jvm());
    cmd.addAll(sharedArchive());
    cmd.add("io.shardtrain.samples.cli.ShardTrainCli");
    cmd.addAll(List.of(args));
    Path log = logDir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    for (String kv : env) {
      int eq = kv.indexOf('=');
      pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    NodeProcess node = new NodeProcess(name, pb.start(), log);
    if (joining && NICE != null && RENICE != null) {
      Thread normal = new Thread(node::normalPriorityOnceUp, "renice-" + name);
      normal.setDaemon(true);
      normal.start();
    }
    return node;
  }

  private static final Path NICE = executable("nice");
  private static final Path RENICE = executable("renice");

  private static Path executable(String name) {
    return Stream.of("/usr/bin/", "/bin/").map(dir -> Path.of(dir + name)).filter(Files::isExecutable).findFirst()
        .orElse(null);
  }

  private void normalPriorityOnceUp() {
    try {
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      while (process.isAlive() && System.nanoTime() < deadline && !log().contains(" up with roles")) {
        Thread.sleep(100);
      }
      // Linux keeps a priority per thread, and a thread starts with its creator's: each one, and
      // again a second later for those started by threads not yet set.
      Path tasks = Path.of("/proc", "" + process.pid(), "task");
      for (int pass = 0; pass < 2 && process.isAlive() && Files.isDirectory(tasks); pass++) {
        if (pass > 0) Thread.sleep(1000);
        List<String> cmd = new ArrayList<>(List.of(RENICE.toString(), "--priority", "0", "-p"));
        try (Stream<Path> threads = Files.list(tasks)) {
          threads.forEach(t -> cmd.add(t.getFileName().toString()));
        }
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
            .waitFor();
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      // it goes on at the higher priority
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The node JVM up to its main class. The classpath is this test's without the test classes (the
   * node needs none of them): a class-data archive holds classes from jars only. Several node JVMs
   * run short jobs at once on two cores, so a trainer node neither warms up the kernels (a second
   * of a core, which pays back only over thousands of steps) nor collects the heap after reading its
   * data (a serial full collection); the warm-up has its own tests in the compute module.
   */
  private static List<String> jvm() {
    Path testClasses;
    try {
      testClasses = Path.of(NodeProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    String cp = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !Path.of(e).toAbsolutePath().normalize().equals(testClasses.toAbsolutePath().normalize()))
        .collect(Collectors.joining(File.pathSeparator));
    return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        // Two cores, as on the machine these tests are sized for, whatever this one has.
        "--add-modules", "jdk.incubator.vector", "-XX:ActiveProcessorCount=2", "-Xmx1g", "-XX:+UseSerialGC",
        "-Dshardtrain.compute.warm-up=false", "-Dshardtrain.compute.shape-kernels=false", "-XX:+DisableExplicitGC",
        "-cp", cp);
  }

  private static List<String> archiveFlags;

  /**
   * JVM flags that load the node's classes from an application class-data archive, made once per
   * test JVM from a node started alone (the jars may have been rebuilt since the last one): a node
   * JVM then spends about 40% less CPU until it is up, and several of them start at once on two
   * cores. The archive changes how classes are loaded, not which. Empty if it could not be made.
   */
  private static synchronized List<String> sharedArchive() {
    if (archiveFlags != null) return archiveFlags;
    archiveFlags = List.of();
    Path archive = Path.of("target", "node-jvm.jsa").toAbsolutePath();
    Path log = archive.resolveSibling("node-jvm-archive.log");
    try {
      Files.deleteIfExists(archive);
      int port = FreePorts.one();
      List<String> cmd = new ArrayList<>(jvm());
      cmd.addAll(List.of("-XX:ArchiveClassesAtExit=" + archive, "io.shardtrain.samples.cli.ShardTrainCli", "node",
          "--roles", "master,ps,trainer", "--port", "" + port, "--seeds", "127.0.0.1:" + port, "--journal", "memory"));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (p.isAlive() && System.nanoTime() < deadline && !Files.readString(log).contains(" up with roles")) {
        Thread.sleep(100);
      }
      // SIGTERM: the archive is written as the JVM exits.
      p.destroy();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
      } else if (Files.isRegularFile(archive)) {
        // None where the classpath holds directories (an IDE's may): the JVM archives jars only.
        archiveFlags = List.of("-XX:SharedArchiveFile=" + archive);
      }
    } catch (IOException e) {
      // no archive: the nodes load their classes as usual
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return archiveFlags;
  }

  /** SIGKILL. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * SIGTERM, as Ctrl-C or {@code kill} sends it: the node's signal handler runs Akka's coordinated
   * shutdown (shard hand-off, cluster leave), and the JVM then exits 0. Returns whether the JVM
   * exited within {@code seconds}.
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
