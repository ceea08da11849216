package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.samples.cluster.TrainerNode;
import io.shardtrain.samples.testing.FreePorts;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code submit}, {@code status}, {@code save-model} and {@code checkpoint} through a node's gRPC
 * API: against a running node (one node in this JVM with roles ps, master and trainer), against an address
 * where nothing listens, and with a job file that does not parse.
 */
class GrpcClientCommandsTest {
  @TempDir static Path dir;
  static ClusterNode.Started node;
  static String grpc;

  record Run(int exit, String out, String err, long millis) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    long start = System.nanoTime();
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(exit, out.toString(), err.toString(), (System.nanoTime() - start) / 1_000_000);
  }

  /** A node with roles ps, master and trainer in this JVM, serving gRPC, over the tiny data set written to {@code dir}. */
  static ClusterNode.Started startLoopbackNode(Path dir) throws Exception {
    TinyDataSet.write(dir);
    return ClusterNode.startOnLoopback(List.of("ps", "master", "trainer"),
        Map.of("shardtrain.data-dir", dir.toString(), "shardtrain.transport.bulk.enabled", false));
  }

  static void stop(ClusterNode.Started node) throws Exception {
    if (node != null) {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  @BeforeAll
  static void startNode() throws Exception {
    node = startLoopbackNode(dir);
    grpc = "127.0.0.1:" + node.grpcPort();
  }

  @AfterAll
  static void stopNode() throws Exception {
    stop(node);
  }

  @Test
  void statusWhereNothingListensFailsWithinFiveSecondsNamingTheAddress() throws IOException {
    String target = "127.0.0.1:" + FreePorts.one();
    Run r = run("status", "--grpc", target);
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains(target), r.err());
    assertTrue(r.millis() < 5000, "took " + r.millis() + " ms");
    System.out.println("nothing listening: failed in " + r.millis() + " ms: " + r.err().strip());
  }

  @Test
  void submitWhereNothingListensYetTriesAgainForItsTimeoutSayingSoOnce() throws IOException {
    String target = "127.0.0.1:" + FreePorts.one();
    Path job = dir.resolve("patient.conf");
    Files.writeString(job, "shardtrain.data-dir = \"" + dir + "\"\nshardtrain.train { dataset = fashion-mnist }\n");
    Run r = run("submit", "--grpc", target, "--job", job.toString(), "--timeout", "3");
    assertEquals(2, r.exit(), r.out() + r.err());
    List<String> lines = r.err().strip().lines().toList();
    assertEquals(2, lines.size(), r.err());
    assertTrue(lines.get(0).startsWith("shardtrain: no ShardTrain gRPC API answered at " + target), lines.get(0));
    assertTrue(lines.get(0).endsWith("; trying again for up to 3 s (--timeout)"), lines.get(0));
    assertTrue(lines.get(1).startsWith("shardtrain: error: no ShardTrain gRPC API answered at " + target), lines.get(1));
    assertTrue(r.millis() >= 2000, "gave up after " + r.millis() + " ms");
  }

  /** A cluster still forming answers UNAVAILABLE: submit tries again, saying so once, and ends with the reason. */
  @Test
  void submitToAClusterShortOfPsNodesTriesAgainForItsTimeoutSayingSoOnce() throws Exception {
    Path own = Files.createDirectories(dir.resolve("short"));
    TinyDataSet.write(own);
    ClusterNode.Started shortOfPs = ClusterNode.startOnLoopback(List.of("ps", "master"), Map.of("shardtrain.data-dir",
        own.toString(), "shardtrain.transport.bulk.enabled", false, "shardtrain.ps.min-nodes", 2));
    try {
      Path job = own.resolve("short.conf");
      Files.writeString(job, "shardtrain.data-dir = \"" + own + "\"\nshardtrain.train { dataset = fashion-mnist }\n");
      Run r = run("submit", "--grpc", "127.0.0.1:" + shortOfPs.grpcPort(), "--job", job.toString(), "--timeout", "3");
      assertEquals(2, r.exit(), r.out() + r.err());
      List<String> lines = r.err().strip().lines().toList();
      assertEquals(2, lines.size(), r.err());
      // 0 until the node's own shard region has registered with the coordinator, then 1.
      assertTrue(lines.get(0).matches("shardtrain: only [01] of the 2 ps nodes .*; trying again for up to [1-3] s"
          + " \\(--timeout\\)"), lines.get(0));
      assertTrue(lines.get(1).matches(".*only [01] of the 2 ps nodes.*"), lines.get(1));
    } finally {
      stop(shortOfPs);
    }
  }

  @Test
  void statusAtAHostThatDoesNotResolveFailsNamingItWithoutTheChannelsStackTrace() throws IOException {
    List<LogRecord> logged = new CopyOnWriteArrayList<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        logged.add(record);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger grpcLog = Logger.getLogger("io.grpc");
    grpcLog.addHandler(handler);
    try {
      Run r = run("status", "--grpc", "no-such-host.invalid:50051");
      assertEquals(2, r.exit(), r.out() + r.err());
      assertTrue(r.err().contains("no ShardTrain gRPC API answered at no-such-host.invalid:50051"), r.err());
      assertTrue(r.err().contains("UnknownHostException"), r.err());
    } finally {
      grpcLog.removeHandler(handler);
    }
    assertEquals(List.of(), logged.stream().filter(l -> l.getLevel().intValue() >= Level.WARNING.intValue())
        .map(LogRecord::getMessage).toList());
  }

  @Test
  void statusWhereAPortAcceptsButNeverAnswersFailsWithinFiveSeconds() throws IOException {
    // The kernel completes the TCP handshake into the backlog; nothing ever speaks HTTP/2.
    try (ServerSocket silent = new ServerSocket(0)) {
      String target = "127.0.0.1:" + silent.getLocalPort();
      Run r = run("status", "--grpc", target);
      assertEquals(2, r.exit(), r.out() + r.err());
      assertTrue(r.err().contains("no ShardTrain gRPC API answered at " + target + " within 4 s"), r.err());
      assertTrue(r.millis() < 5000, "took " + r.millis() + " ms");
    }
  }

  @Test
  void aJobFileThatDoesNotParseOrNamesAnUnknownDatasetFailsBeforeAnyConnection() throws IOException {
    Path job = dir.resolve("broken.conf");
    Files.writeString(job, "shardtrain.train { batch = 8\n");
    // Nothing listens there: had the command connected first, the error would name the address.
    String target = "127.0.0.1:" + FreePorts.one();
    Run r = run("submit", "--grpc", target, "--job", job.toString());
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("job file " + job), r.err());
    assertFalse(r.err().contains(target), r.err());
    Run missing = run("submit", "--grpc", target, "--job", dir.resolve("missing.conf").toString());
    assertEquals("shardtrain: error: job file " + dir.resolve("missing.conf") + " does not exist", missing.err().strip());

    Path unknown = dir.resolve("imagenet.conf");
    Files.writeString(unknown, "shardtrain.train { dataset = imagenet }\n");
    Run d = run("submit", "--grpc", target, "--job", unknown.toString());
    assertEquals(2, d.exit(), d.out() + d.err());
    assertTrue(d.err().contains("unknown dataset 'imagenet': expected mnist, fashion-mnist (an MLP), ctr or"
        + " criteo:PATH (a factorization machine)"), d.err());
    assertFalse(d.err().contains(target), d.err());

    Path none = dir.resolve("no-trainers.conf");
    Files.writeString(none, "shardtrain.data-dir = \"" + dir + "\"\nshardtrain.train { dataset = fashion-mnist,"
        + " trainers = 0 }\n");
    Run t = run("submit", "--grpc", target, "--job", none.toString());
    assertEquals(2, t.exit(), t.out() + t.err());
    assertEquals("shardtrain: error: shardtrain.train.trainers must be at least 1, got 0", t.err().strip());
  }

  @Test
  void aResumeFromACorruptCheckpointIsRefusedByTheNodeNamingTheFileAndStartsNothing() throws Exception {
    Path job = dir.resolve("resumed-job.conf");
    Files.writeString(job, "shardtrain.data-dir = \"" + dir + "\"\n"
        + "shardtrain.train { job-id = resumed, dataset = fashion-mnist, steps = 400, trainers = 1, hidden = [8] }\n");
    Path checkpoint = dir.resolve("corrupt-checkpoint");
    Files.createDirectories(checkpoint);
    Files.writeString(checkpoint.resolve("manifest.json"), "{");
    Run r = run("submit", "--grpc", grpc, "--job", job.toString(), "--resume-from", checkpoint.toString());
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("cannot resume from " + checkpoint + ": ") && r.err().contains("manifest.json"),
        r.err());
    assertFalse(r.out().contains("submitted"), r.out());
    Run status = run("status", "--grpc", grpc);
    assertFalse(status.out().contains("job resumed"), status.out());
  }

  @Test
  void submitWaitFollowsTheJobItSubmittedWhileANewerOneRunsAndEnds() throws Exception {
    String common = "shardtrain.data-dir = \"" + dir + "\"\nshardtrain.train { dataset = fashion-mnist, steps = 40,"
        + " trainers = %d, hidden = [8], batch = 16, job-id = %s }\n";
    // Two trainers: it does not start until the test starts them, after the newer job is done.
    Path waitedJob = dir.resolve("waited.conf");
    Files.writeString(waitedJob, common.formatted(2, "waited"));
    Path newerJob = dir.resolve("newer.conf");
    Files.writeString(newerJob, common.formatted(1, "newer"));
    CompletableFuture<Run> waiting = CompletableFuture.supplyAsync(
        () -> run("submit", "--grpc", grpc, "--job", waitedJob.toString(), "--wait"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!node.api().status("waited").toCompletableFuture().get(10, TimeUnit.SECONDS).submitted()) {
      assertTrue(System.nanoTime() < deadline, "job waited not submitted");
      Thread.sleep(50);
    }
    Run newer = run("submit", "--grpc", grpc, "--job", newerJob.toString());
    assertEquals(0, newer.exit(), newer.err());
    TrainSettings settings = TrainSettings.fromConfig(node.system().settings().config());
    assertEquals(40L, TrainerNode.start(node.api(), "for-newer", settings, System.out, "newer").get(120, TimeUnit.SECONDS));
    // The newer job is done; the one submit waits for has not started. Four polls later it still waits.
    Thread.sleep(1000);
    assertFalse(waiting.isDone(), waiting.isDone() ? waiting.get().out() : "");
    // Two trainers for it (a trainer of another test that takes each job as it comes may join it too).
    CompletableFuture<Long> w1 = TrainerNode.start(node.api(), "for-waited-1", settings, System.out, "waited");
    CompletableFuture<Long> w2 = TrainerNode.start(node.api(), "for-waited-2", settings, System.out, "waited");
    w1.get(120, TimeUnit.SECONDS);
    w2.get(120, TimeUnit.SECONDS);
    Run waited = waiting.get(60, TimeUnit.SECONDS);
    assertEquals(0, waited.exit(), waited.err());
    assertTrue(waited.out().contains("job waited done: "), waited.out());
  }

  @Test
  void cancelJobStopsTheJobsTrainersAfterTheirStepAndStatusSaysCancelled() throws Exception {
    Path job = dir.resolve("cancel.conf");
    Files.writeString(job, "shardtrain.data-dir = \"" + dir + "\"\nshardtrain.train { job-id = cancel-cli,"
        + " dataset = fashion-mnist, steps = 100000, trainers = 1, hidden = [8], batch = 16 }\n");
    Run submit = run("submit", "--grpc", grpc, "--job", job.toString());
    assertEquals(0, submit.exit(), submit.err());
    CompletableFuture<Long> trained = TrainerNode.start(node.api(), "for-cancel",
        TrainSettings.fromConfig(node.system().settings().config()), System.out, "cancel-cli");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (node.api().status("cancel-cli").toCompletableFuture().get(10, TimeUnit.SECONDS).examplesReported() == 0) {
      assertTrue(System.nanoTime() < deadline, "no progress reported");
      Thread.sleep(50);
    }
    Run cancel = run("cancel-job", "cancel-cli", "--grpc", grpc);
    assertEquals(0, cancel.exit(), cancel.err());
    assertTrue(Pattern.compile("job cancel-cli cancelled; its trainers finish the step they are in and leave:"
        + " for-cancel \\(last step \\d+\\)").matcher(cancel.out()).find(), cancel.out());
    long steps = trained.get(60, TimeUnit.SECONDS);
    assertTrue(steps > 0 && steps < 100000, "trained " + steps + " steps");
    Run status = run("status", "--grpc", grpc, "--job", "cancel-cli");
    assertTrue(status.out().contains("job cancel-cli: cancelled, sync mode"), status.out());
    Run again = run("cancel-job", "cancel-cli", "--grpc", grpc);
    assertEquals(2, again.exit(), again.out());
    assertTrue(again.err().contains("job 'cancel-cli' was cancelled already"), again.err());
    Run unknown = run("cancel-job", "no-such-job", "--grpc", grpc);
    assertEquals(2, unknown.exit(), unknown.out());
    assertTrue(unknown.err().contains("no job 'no-such-job' in this cluster"), unknown.err());
    // Finished once its trainer left, so its journal can be deleted; its blocks leave memory (the other tests count them).
    while (node.api().jobs().toCompletableFuture().get(10, TimeUnit.SECONDS).stream()
        .anyMatch(j -> j.jobId().equals("cancel-cli") && j.running())) {
      assertTrue(System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(60), "cancel-cli never finished");
      Thread.sleep(50);
    }
    Run delete = run("delete-job", "cancel-cli", "--grpc", grpc);
    assertEquals(0, delete.exit(), delete.err());
    Run deleted = run("save-model", "--grpc", grpc, "--job", "cancel-cli", "--out", dir.resolve("gone").toString());
    assertEquals("shardtrain: error: save-model at " + grpc + ": FAILED_PRECONDITION job 'cancel-cli' was deleted: its"
        + " blocks and progress are gone (its id stays taken)", deleted.err().strip());
    while (run("status", "--grpc", grpc).out().contains("cancel-cli/")) {
      assertTrue(System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(90), "cancel-cli's blocks stay in memory");
      Thread.sleep(100);
    }
  }

  @Test
  void submitStatusSaveModelAndCheckpointTalkToTheNodeWithoutJoiningIt() throws Exception {
    Path job = dir.resolve("job.conf");
    // An include and a substitution are resolved on this side: the node takes the job's text on its own.
    Files.writeString(dir.resolve("model.conf"), "shardtrain.train.hidden = [8]\n");
    Files.writeString(job, "include \"model.conf\"\nshardtrain.data-dir = \"" + dir + "\"\n"
        + "shardtrain.train { job-id = cli-job, dataset = fashion-mnist, steps = 1500, trainers = 1,"
        + " seed = ${shardtrain.train.trainers} }\n");
    Run reportOnly = run("submit", "--grpc", grpc, "--job", job.toString(), "--report", dir.resolve("r.json").toString());
    assertEquals(2, reportOnly.exit(), reportOnly.err());
    assertEquals("shardtrain: error: --report writes the job's figures once it is done: add --wait",
        reportOnly.err().strip());
    Run submit = run("submit", "--grpc", grpc, "--job", job.toString());
    assertEquals(0, submit.exit(), submit.err());
    // 64 inputs -> 8 hidden -> 4 classes: four parameters, each one block.
    assertTrue(submit.out().contains("job cli-job submitted: sync mode, 1 trainer, 4 parameter blocks"), submit.out());

    Run status = run("status", "--grpc", grpc);
    assertEquals(0, status.exit(), status.err());
    assertTrue(status.out().contains("job cli-job: running, sync mode"), status.out());
    assertTrue(status.out().contains("4 blocks:"), status.out());
    // Only the node itself is a member: the command did not join.
    assertEquals(1, status.out().lines().filter(l -> l.contains("akka://shardtrain@")).filter(l -> l.contains("Up"))
        .count(), status.out());
    // A client that joins the cluster takes 10-15 s; through gRPC it is a few hundred ms here.
    assertTrue(status.millis() < 2000, "status took " + status.millis() + " ms");
    System.out.println("status answered in " + status.millis() + " ms");

    Path model = dir.resolve("saved");
    Run save = run("save-model", "--grpc", grpc, "--out", model.toString());
    assertEquals(0, save.exit(), save.err());
    assertTrue(save.out().contains("model of job cli-job at version 0 saved to " + model), save.out());
    assertTrue(Files.isRegularFile(model.resolve("manifest.json")), "manifest written");
    // A path the node cannot write is the caller's mistake, with the file system's reason.
    Run proc = run("save-model", "--grpc", grpc, "--out", "/proc/shardtrain-model");
    assertEquals(2, proc.exit(), proc.err());
    assertTrue(proc.err().strip().matches("shardtrain: error: save-model at .*: INVALID_ARGUMENT cannot write the"
        + " model to /proc/shardtrain-model: .+ \\(/proc/.+\\)"), proc.err());
    // No trainer yet: no block reaches another step, so a checkpoint is refused at once, not after a timeout.
    Run early = run("checkpoint", "--grpc", grpc, "--dir", dir.resolve("too-early").toString());
    assertEquals(2, early.exit(), early.err());
    assertEquals("shardtrain: error: job cli-job has no trainer: a checkpoint is taken at the next step every block"
        + " reaches, and no trainer takes one; start a trainer node first", early.err().strip());

    // A trainer in the node's JVM trains; a checkpoint through the API catches the job running.
    var trained = TrainerNode.start(node.api(), "t1", TrainSettings.fromConfig(node.system().settings().config()),
        System.out);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS).examplesReported() == 0) {
      assertTrue(System.nanoTime() < deadline, "no progress reported");
      Thread.sleep(100);
    }
    // A watch prints the status again and the rate between two prints: the job still runs then
    // (400 steps were done within the watch's second on a quiet host, in CI).
    Run watch = run("status", "--grpc", grpc, "--watch", "1", "--watch-count", "2");
    assertEquals(0, watch.exit(), watch.err());
    assertEquals(2, watch.out().lines().filter(l -> l.matches("--- \\d\\d:\\d\\d:\\d\\d ---")).count(), watch.out());
    assertTrue(Pattern.compile("\\d+ examples/s over the last 1\\.\\d s").matcher(watch.out()).find(), watch.out());
    Path checkpoint = dir.resolve("ckpt");
    Run c = run("checkpoint", "--grpc", grpc, "--dir", checkpoint.toString());
    assertEquals(0, c.exit(), c.err());
    assertTrue(c.out().matches("(?s)checkpoint of job cli-job asked for; waiting for the step every block reaches"
        + " \\(at most 60 s\\)\\Rcheckpoint of job cli-job at step \\d+ written to "
        + Pattern.quote(checkpoint.toString()) + "\\R"), c.out());
    assertTrue(Files.isRegularFile(checkpoint.resolve("manifest.json")), "checkpoint written");
    // While the job trains, save-model reads every block at one version (ConsistentRead).
    Path during = dir.resolve("saved-during");
    Run midJob = run("save-model", "--grpc", grpc, "--out", during.toString());
    assertEquals(0, midJob.exit(), midJob.err());
    assertTrue(midJob.out().matches("(?s)model of job cli-job at version [1-9]\\d* saved to .*"), midJob.out());
    assertEquals(1500L, trained.get(120, TimeUnit.SECONDS), "the trainer ran its steps");
  }
}
