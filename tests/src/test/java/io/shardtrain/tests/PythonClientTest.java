package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.cluster.TrainerNode;
import io.shardtrain.samples.data.MnistFetcher;
import io.shardtrain.samples.testing.FreePorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python client (clients/python) against a real node in this JVM (roles ps, master and
 * trainer, serving the gRPC API): the package's unit tests, the numpy example trainer training
 * MNIST alone for three epochs, and one sync job trained by a JVM trainer and a Python trainer
 * together; where PyTorch is importable, the torch example trainer too. Needs a python3 with grpc,
 * protobuf and numpy (Debian: python3-grpcio, python3-protobuf, python3-numpy; .ci/run installs
 * them); without one it is skipped, saying why.
 */
class PythonClientTest {
  static final Path CLIENT = Path.of("..", "clients", "python").toAbsolutePath().normalize();
  static final Pattern RESULT = Pattern.compile(
      "trainer (\\S+): (\\d+) steps pushed, \\d+ examples/s, last step (\\d+), version (\\d+), test accuracy ([0-9.]+)");

  static String python;
  static Path dataDir;

  @TempDir Path tmp;

  record Run(int exit, String output, long millis) {}

  /**
   * Threads for what blocks (a process's output, a whole Python run): not the common pool, whose two
   * threads run the in-process node's callbacks and would starve while a test held them.
   */
  static final java.util.concurrent.ExecutorService BLOCKING = java.util.concurrent.Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "python-client-test");
    t.setDaemon(true);
    return t;
  });

  @BeforeAll
  static void findPythonAndMnist() throws Exception {
    List<String> tried = new ArrayList<>();
    List<String> candidates = new ArrayList<>();
    String configured = System.getenv("SHARDTRAIN_PYTHON");
    if (configured != null && !configured.isBlank()) candidates.add(configured);
    candidates.add("python3");
    // Debian's interpreter, which its python3-* packages are for, when another python3 comes first on the PATH.
    candidates.add("/usr/bin/python3");
    for (String candidate : candidates) {
      String missing = missingModules(candidate);
      if (missing == null) {
        python = candidate;
        break;
      }
      tried.add(candidate + ": " + missing);
    }
    Assumptions.assumeTrue(python != null, "no python3 with grpc, protobuf 3.20+ and numpy (apt-get install python3-grpcio "
        + "python3-protobuf python3-numpy): " + String.join("; ", tried));
    dataDir = TrainSettings.fromConfig(ClusterTestSupport.config("")).dataDir();
    MnistFetcher.ensure(dataDir);
  }

  /** Null when {@code python} imports grpc, numpy and google.protobuf 3.20 or later (what the message classes need); else what failed. */
  static String missingModules(String python) {
    try {
      Run r = run(List.of(python, "-c", "import grpc, numpy; from google.protobuf import __version__ as v; "
          + "assert tuple(map(int, v.split('.')[:2])) >= (3, 20), 'protobuf ' + v + ' is older than 3.20'"), 60);
      return r.exit() == 0 ? null : lastLine(r.output());
    } catch (IOException e) {
      return "cannot run it (" + e.getMessage() + ")";
    }
  }

  static String lastLine(String output) {
    List<String> lines = output.strip().lines().toList();
    return lines.isEmpty() ? "no output" : lines.get(lines.size() - 1);
  }

  static Run run(List<String> command, long timeoutSeconds) throws IOException {
    return run(new ProcessBuilder(command).directory(CLIENT.toFile()).redirectErrorStream(true), timeoutSeconds);
  }

  static Run run(ProcessBuilder builder, long timeoutSeconds) throws IOException {
    List<String> command = builder.command();
    long start = System.nanoTime();
    Process p = builder.start();
    CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return "(output unreadable: " + e.getMessage() + ")";
      }
    }, BLOCKING);
    try {
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s; output:\n"
            + output.getNow("(none yet)"));
      }
      return new Run(p.exitValue(), output.get(10, TimeUnit.SECONDS), (System.nanoTime() - start) / 1_000_000);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new AssertionError("output of " + command + " unreadable", e);
    }
  }

  static ClusterNode.Started node() throws Exception {
    var config = NodeConfig.build(List.of("ps", "master", "trainer"), "127.0.0.1", FreePorts.one(), List.of(), "memory", null,
        Map.of("shardtrain.grpc.port", 0, "shardtrain.data-dir", dataDir.toString()));
    ClusterNode.Started node = ClusterNode.start(config);
    ClusterNode.awaitUp(node.system(), java.time.Duration.ofSeconds(30));
    return node;
  }

  static void stop(ClusterNode.Started node) throws Exception {
    node.system().terminate();
    node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** The numpy example trainer against {@code node}, submitting {@code job} when not null. */
  Run trainNumpy(ClusterNode.Started node, String trainerId, String job) throws IOException {
    return train("examples/train_mnist_numpy.py", node, trainerId, job);
  }

  Run train(String example, ClusterNode.Started node, String trainerId, String job) throws IOException {
    List<String> command = new ArrayList<>(List.of(python, example,
        "--grpc", "127.0.0.1:" + node.grpcPort(), "--data-dir", dataDir.resolve(MnistFetcher.SUBDIR).toString(),
        "--trainer-id", trainerId));
    if (job != null) {
      Path file = tmp.resolve(trainerId + ".conf");
      Files.writeString(file, job);
      command.addAll(List.of("--submit", file.toString()));
    }
    Run r = run(command, 600);
    System.out.println(r.output());
    System.out.printf("%s: exit %d after %.1f s%n", trainerId, r.exit(), r.millis() / 1000.0);
    return r;
  }

  static Matcher result(Run r) {
    Matcher m = RESULT.matcher(r.output());
    assertTrue(m.find(), "no result line in\n" + r.output());
    return m;
  }

  @Test
  void thePackagesUnitTestsPass() throws Exception {
    Run r = run(List.of(python, "-m", "unittest", "discover", "-s", "tests", "-t", "."), 120);
    System.out.println(r.output());
    assertEquals(0, r.exit(), r.output());
    Matcher ran = Pattern.compile("Ran (\\d+) tests").matcher(r.output());
    assertTrue(ran.find() && Integer.parseInt(ran.group(1)) > 0, r.output());
  }

  @Test
  void theCommittedMessageClassesAreWhatGenerateShMakesOfTheProto() throws Exception {
    Path out = Files.createDirectories(tmp.resolve("generated"));
    ProcessBuilder b = new ProcessBuilder("bash", "generate.sh").directory(CLIENT.toFile()).redirectErrorStream(true);
    b.environment().put("OUT", out.toString());
    Run r = run(b, 120);
    // Exit status 2: no protoc 3.20+ here (the script says where it looked).
    Assumptions.assumeTrue(r.exit() != 2, r.output().strip());
    assertEquals(0, r.exit(), r.output());
    assertEquals(Files.readString(CLIENT.resolve("shardtrain/shardtrain_pb2.py")),
        Files.readString(out.resolve("shardtrain_pb2.py")),
        "shardtrain_pb2.py is not what the proto makes now: run clients/python/generate.sh");
  }

  @Test
  void aSecuredNodeAnswersTheClientWithTheCaAndTokenAndRefusesItWithoutTheToken() throws Exception {
    // The actors module's committed test stores (their README says how scripts/make-certs.sh made them).
    Path stores = Path.of("..", "actors", "src", "test", "resources", "tls", "cluster").toAbsolutePath().normalize();
    String password = Files.readString(stores.resolve("password")).trim();
    var config = NodeConfig.build(List.of("ps", "master"), "127.0.0.1", FreePorts.one(), List.of(), "memory", null,
        Map.of("shardtrain.grpc.port", 0, "shardtrain.security.enabled", true,
            "shardtrain.security.key-store", stores.resolve("node1.p12").toString(),
            "shardtrain.security.key-store-password", password,
            "shardtrain.security.trust-store", stores.resolve("truststore.p12").toString(),
            "shardtrain.security.trust-store-password", password,
            "shardtrain.security.token-file", stores.resolve("token").toString()));
    ClusterNode.Started node = ClusterNode.start(config);
    try {
      ClusterNode.awaitUp(node.system(), java.time.Duration.ofSeconds(30));
      Run r = run(List.of(python, "-c", """
          import sys
          from shardtrain.client import Client, ShardTrainError
          target, ca, token = sys.argv[1:4]
          with Client(target, ca_file=ca, token_file=token) as c:
              print("members", len(c.status().members))
          try:
              with Client(target, ca_file=ca, timeout=10) as c:
                  c.status()
          except ShardTrainError as e:
              print("without the token:", e.code.name)
          """, "127.0.0.1:" + node.grpcPort(), stores.resolve("ca.pem").toString(), stores.resolve("token").toString()),
          60);
      assertEquals(0, r.exit(), r.output());
      assertTrue(r.output().contains("members 1"), r.output());
      assertTrue(r.output().contains("without the token: UNAUTHENTICATED"), r.output());
    } finally {
      stop(node);
    }
  }

  @Test
  void aJobTheNodeRefusesEndsTheTrainerWithTheStatusAndTheNodesMessage() throws Exception {
    ClusterNode.Started node = node();
    try {
      Run r = trainNumpy(node, "py-1", "shardtrain.train { batch = \n");
      assertEquals(2, r.exit(), r.output());
      assertTrue(r.output().contains("train_mnist_numpy: error: SubmitJob: INVALID_ARGUMENT: job description does not "
          + "parse"), r.output());
    } finally {
      stop(node);
    }
  }

  @Test
  void theNumpyTrainerAloneReaches97PercentInThreeEpochs() throws Exception {
    ClusterNode.Started node = node();
    try {
      Run r = trainNumpy(node, "py-1", """
          shardtrain.train { job-id = python-numpy, dataset = mnist, hidden = [128], batch = 128, lr = 0.2,
            epochs = 3, trainers = 1, mode = sync }
          """);
      assertEquals(0, r.exit(), r.output());
      Matcher m = result(r);
      // ceil(60000 / 128) = 469 steps per epoch, all of them this trainer's.
      assertEquals(3 * 469, Integer.parseInt(m.group(2)), r.output());
      assertEquals(3 * 469, Long.parseLong(m.group(4)), "the blocks' version");
      double accuracy = Double.parseDouble(m.group(5));
      assertTrue(accuracy >= 0.97, "test accuracy " + accuracy);
      JobProtocol.JobStatus s = node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertTrue(s.done(), "job done");
      assertEquals(3L * 60_000, s.examplesReported());
    } finally {
      stop(node);
    }
  }

  @Test
  void theTorchTrainerTrainsHalfAnEpochWhenPyTorchIsInstalled() throws Exception {
    Run probe = run(List.of(python, "-c", "import torch"), 120);
    Assumptions.assumeTrue(probe.exit() == 0, "PyTorch is not importable by " + python + " (Debian: python3-torch): "
        + lastLine(probe.output()));
    ClusterNode.Started node = node();
    try {
      Run r = train("examples/train_mnist_torch.py", node, "torch-1", """
          shardtrain.train { job-id = python-torch, dataset = mnist, hidden = [128], batch = 128, lr = 0.2,
            steps = 235, trainers = 1, mode = sync }
          """);
      assertEquals(0, r.exit(), r.output());
      Matcher m = result(r);
      assertEquals(235, Integer.parseInt(m.group(2)), r.output());
      assertEquals(235, Long.parseLong(m.group(4)), "the blocks' version");
      double accuracy = Double.parseDouble(m.group(5));
      assertTrue(accuracy >= 0.93, "test accuracy after 30080 examples " + accuracy);
    } finally {
      stop(node);
    }
  }

  @Test
  void aJvmTrainerAndAPythonTrainerTrainOneSyncJobTogether() throws Exception {
    ClusterNode.Started node = node();
    try {
      CompletableFuture<Run> py = CompletableFuture.supplyAsync(() -> {
        try {
          return trainNumpy(node, "py-1", """
              shardtrain.train { job-id = python-mixed, dataset = mnist, hidden = [128], batch = 128, lr = 0.2,
                epochs = 2, trainers = 2, mode = sync }
              """);
        } catch (IOException e) {
          throw new AssertionError(e);
        }
      }, BLOCKING);
      CompletableFuture<Long> jvm = TrainerNode.start(node.api(), "jvm-1",
          TrainSettings.fromConfig(node.system().settings().config()), System.out);
      Run r = py.get(600, TimeUnit.SECONDS);
      assertEquals(0, r.exit(), r.output());
      long jvmSteps = jvm.get(60, TimeUnit.SECONDS);
      Matcher m = result(r);
      // Two tasks of 30000 examples per epoch, one each: ceil(30000 / 128) = 235 steps with data per epoch,
      // every one a barrier of both. The one who finishes first may find the epoch's last report not in yet
      // and take part in one more step without data, which the other's leaving closes.
      assertEquals(2 * 235, Integer.parseInt(m.group(2)), "the Python trainer's steps with data\n" + r.output());
      long version = Long.parseLong(m.group(4));
      assertTrue(version >= 2 * 235 && version <= 2 * 235 + 2, "the blocks' version " + version);
      JobProtocol.JobStatus s = node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertTrue(s.done(), "job done");
      // The Python trainer read its version before its leaving closed the JVM trainer's step without
      // data, so the JVM trainer's steps are checked against the blocks as they are now.
      Mlp model = Mlp.create(CpuBackend.create(1), 784, new int[] {128}, 10, Activation.RELU, 1);
      long blocks = node.api().pullInto(model, s.job(), 0).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertTrue(blocks >= version && blocks <= 2 * 235 + 2, "the blocks' version now " + blocks);
      assertTrue(jvmSteps >= 2 * 235 && jvmSteps <= blocks, "the JVM trainer's steps " + jvmSteps
          + ", the blocks' version " + blocks);
      // Every example reported once: the Python trainer's 2 x 30000 and the JVM trainer's as many.
      assertEquals(2L * 60_000, s.examplesReported());
      double accuracy = Double.parseDouble(m.group(5));
      assertTrue(accuracy >= 0.96, "test accuracy after two epochs " + accuracy);
    } finally {
      stop(node);
    }
  }
}
