package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.StatusReply;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.JobSubmitter;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.cluster.TrainerNode;
import io.shardtrain.samples.testing.FreePorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node serving its metrics ({@code shardtrain.metrics.port}) scraped over HTTP before a job, while
 * two of its trainers train a small sync job (300 steps of a 64-8-4 MLP, memory journal), and after:
 * the text is Prometheus' format, and the figures move with the training and agree with what the
 * master and the trainers say; then while a second job's blocks wait at their first barrier for a
 * trainer that never pushes. The Grafana dashboard in cluster-config queries only metrics the node
 * exports.
 */
class MetricsScrapeTest {
  private static final int STEPS = 300;
  private static final Path DASHBOARD = Path.of("..", "cluster-config", "grafana", "shardtrain-dashboard.json");

  @TempDir static Path dir;
  static ClusterNode.Started node;
  static PrometheusText before;
  static PrometheusText during;
  static PrometheusText after;
  static long examplesReported;
  static List<Long> stepsDone = new ArrayList<>();
  /** Every metric name some scrape had. */
  static TreeSet<String> exported = new TreeSet<>();
  /** The scrapes during the job that caught a sync barrier open (how many depends on timing). */
  static List<PrometheusText> openBarriers = new ArrayList<>();
  /** A scrape while a second job's barriers wait for a trainer that registered and never pushes. */
  static PrometheusText held;
  static long heldStepsDone;

  static String get(int port) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(10))
            .build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode());
    assertEquals("text/plain; version=0.0.4; charset=utf-8", r.headers().firstValue("Content-Type").orElse(""));
    return r.body();
  }

  static PrometheusText scrape() throws Exception {
    return PrometheusText.parse(get(node.metricsPort()));
  }

  @BeforeAll
  static void trainWhileScraping() throws Exception {
    TinyDataSet.write(dir);
    Config config = NodeConfig.build(List.of("ps", "master", "trainer"), "127.0.0.1", FreePorts.one(), List.of(),
        "memory", null, Map.of("shardtrain.metrics.port", FreePorts.one(), "shardtrain.data-dir", dir.toString(),
            "shardtrain.transport.bulk.enabled", false));
    long start = System.nanoTime();
    node = ClusterNode.start(config);
    ClusterNode.awaitUp(node.system(), Duration.ofSeconds(30));
    before = scrape();
    Config job = ConfigFactory.parseString("shardtrain.train { job-id = metrics, dataset = fashion-mnist, hidden = [8],"
        + " steps = " + STEPS + ", trainers = 2, mode = sync }").withFallback(config).resolve();
    JobSubmitter.submit(node.api(), job, Duration.ofSeconds(60));
    TrainSettings settings = TrainSettings.fromConfig(job);
    CompletableFuture<Long> t1 = TrainerNode.start(node.api(), "t1", settings, System.out, "metrics");
    CompletableFuture<Long> t2 = TrainerNode.start(node.api(), "t2", settings, System.out, "metrics");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    do {
      assertTrue(System.nanoTime() < deadline, "no example counted within 60 s");
      Thread.sleep(20);
      during = scrape();
    } while (during.sum("shardtrain_trainer_examples_total") == 0);
    // Scraped on while they train: an open barrier shows whom it waits for only while it is open.
    while (!(t1.isDone() && t2.isDone()) && System.nanoTime() < deadline) {
      PrometheusText s = scrape();
      exported.addAll(s.names());
      if (s.series("shardtrain_block_barrier_missing") > 0) openBarriers.add(s);
      Thread.sleep(10);
    }
    stepsDone.add(t1.get(120, TimeUnit.SECONDS));
    stepsDone.add(t2.get(120, TimeUnit.SECONDS));
    examplesReported = node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS).examplesReported();
    // GC pause meters appear with the first collection; make sure there was one.
    System.gc();
    do {
      Thread.sleep(20);
      after = scrape();
    } while (after.series("jvm_gc_pause_seconds_count") == 0 && System.nanoTime() < deadline);
    held = scrapeWhileHeldAtTheFirstBarrier(config);
    exported.addAll(before.names());
    exported.addAll(during.names());
    exported.addAll(after.names());
    exported.addAll(held.names());
    System.out.printf("node up, %d steps of 2 trainers trained and scraped in %.1f s%n", STEPS,
        (System.nanoTime() - start) / 1e9);
  }

  /**
   * A second sync job of two trainers, one of which, {@code silent}, registers and never asks for a
   * task: the other trains its first step, pushes it, and every block waits for {@code silent}
   * (well within the 30 s the master gives a member without a report). Then {@code silent} leaves,
   * the barriers close without it, and the other trainer finishes the job alone.
   */
  static PrometheusText scrapeWhileHeldAtTheFirstBarrier(Config config) throws Exception {
    Config job = ConfigFactory.parseString("shardtrain.train { job-id = held, dataset = fashion-mnist, hidden = [8],"
        + " steps = 10, trainers = 2, mode = sync }").withFallback(config).resolve();
    JobSubmitter.submit(node.api(), job, Duration.ofSeconds(60));
    ActorRef<JobProtocol.Command> master = node.api().master("held");
    ActorRef<TrainerNotice> silent = node.system().systemActorOf(Behaviors.ignore(), "silent-trainer", Props.empty());
    AskPattern.<JobProtocol.Command, StatusReply<JobProtocol.Registration>>ask(master,
            r -> new JobProtocol.RegisterTrainer("silent", silent, r), Duration.ofSeconds(10), node.system().scheduler())
        .toCompletableFuture().get(10, TimeUnit.SECONDS).getValue();
    CompletableFuture<Long> alone = TrainerNode.start(node.api(), "t1", TrainSettings.fromConfig(job), System.out,
        "held");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    PrometheusText s;
    do {
      assertTrue(System.nanoTime() < deadline, "the blocks of job held did not wait for trainer silent within 20 s");
      Thread.sleep(20);
      s = scrape();
    } while (s.series("shardtrain_block_barrier_missing") < 4);
    AskPattern.<JobProtocol.Command, StatusReply<Done>>ask(master, r -> new JobProtocol.LeaveJob("silent", r),
        Duration.ofSeconds(10), node.system().scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS).getValue();
    heldStepsDone = alone.get(60, TimeUnit.SECONDS);
    return s;
  }

  @AfterAll
  static void stopNode() throws Exception {
    if (node != null) {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  @Test
  void theNodeShowsItselfUpInTheClusterAndItsJvmBeforeAnyJob() {
    assertEquals(1.0, before.sum("shardtrain_cluster_members", "status=\"up\""), before.samples().toString());
    assertEquals(0.0, before.sum("shardtrain_cluster_unreachable"));
    assertEquals(0, before.series("shardtrain_block_pushes_total"));
    assertTrue(before.sum("jvm_memory_used_bytes", "area=\"heap\"") > 0);
    assertTrue(before.series("jvm_gc_pause_seconds_count") + before.series("jvm_gc_memory_allocated_bytes_total") > 0,
        before.names().toString());
    assertTrue(before.sum("jvm_threads_live_threads") > 0);
  }

  @Test
  void pushesPullsAndTheirBytesGrowWhileTheJobTrains() {
    double pushesDuring = during.sum("shardtrain_block_pushes_total");
    double pushesAfter = after.sum("shardtrain_block_pushes_total");
    // Four blocks (two weights, two biases), each pushed by both trainers once a step.
    assertEquals(4, after.series("shardtrain_block_pushes_total"));
    assertTrue(pushesAfter > pushesDuring, pushesDuring + " -> " + pushesAfter);
    assertTrue(pushesAfter >= 2.0 * 4 * STEPS, "pushes " + pushesAfter);
    // dense weights 64x8 and 8x4, biases 8 and 4: 580 floats a step's pushes, 4 bytes each.
    assertTrue(after.sum("shardtrain_block_push_bytes_total") >= 2.0 * STEPS * 580 * 4,
        "push bytes " + after.sum("shardtrain_block_push_bytes_total"));
    assertTrue(after.sum("shardtrain_block_pulls_total") > during.sum("shardtrain_block_pulls_total"));
    assertTrue(after.sum("shardtrain_block_pull_bytes_total") > during.sum("shardtrain_block_pull_bytes_total"));
  }

  @Test
  void everyBlockAppliedAndJournaledEachStepAndItsBarrierWaitedForTheSecondTrainer() {
    for (String block : List.of("metrics/dense1.weight#0", "metrics/dense1.bias#0", "metrics/dense2.weight#0",
        "metrics/dense2.bias#0")) {
      String b = "block=\"" + block + "\"";
      assertEquals(STEPS, after.sum("shardtrain_block_apply_seconds_count", b), block + " " + after.names());
      assertTrue(after.sum("shardtrain_block_apply_seconds_sum", b) > 0);
      // Exact durability journals one StepCommitted a step (and the block's initialisation apart).
      assertTrue(after.sum("shardtrain_block_journal_write_seconds_count", b) >= STEPS, block);
      // The first push of a step opens the barrier, the other trainer's closes it.
      double barriers = after.sum("shardtrain_block_barrier_wait_seconds_count", b);
      assertTrue(barriers > 0 && barriers <= STEPS, block + ": " + barriers);
    }
    assertEquals(0, after.series("shardtrain_block_barrier_missing"), "no barrier is open after the job");
    for (String block : List.of("held/dense1.weight#0", "held/dense1.bias#0", "held/dense2.weight#0",
        "held/dense2.bias#0")) {
      assertEquals(1.0, held.sum("shardtrain_block_barrier_missing", "block=\"" + block + "\"", "trainer=\"silent\""),
          held.samples().toString());
    }
    assertEquals(4, held.series("shardtrain_block_barrier_missing"), held.samples().toString());
    assertEquals(10, heldStepsDone, "steps of job held its trainer trained once silent left");
    for (PrometheusText s : openBarriers) {
      // A block whose barrier is open waits for one of the two trainers: the other pushed.
      for (String key : s.samples().keySet()) {
        if (!key.startsWith("shardtrain_block_barrier_missing{")) continue;
        assertTrue(key.matches(".*trainer=\"t[12]\".*"), key);
        assertEquals(1.0, s.samples().get(key));
      }
      assertTrue(s.series("shardtrain_block_barrier_missing") <= 4, s.samples().toString());
    }
    System.out.println(openBarriers.size() + " scrapes during the job caught a barrier open");
  }

  @Test
  void stepTimesExamplesAndLossPerTrainerAgreeWithTheTrainersAndTheMaster() {
    for (int i = 0; i < 2; i++) {
      String t = "trainer=\"t" + (i + 1) + "\"";
      for (String part : List.of("compute", "push_wait", "pull_wait", "master_wait")) {
        assertEquals((double) stepsDone.get(i), after.sum("shardtrain_trainer_step_seconds_count", t, "part=\"" + part + "\""),
            t + " " + part);
      }
      assertTrue(after.sum("shardtrain_trainer_step_seconds_sum", t, "part=\"compute\"") > 0);
      assertTrue(after.sum("shardtrain_trainer_step_seconds_count", t, "part=\"compute\"")
          > during.sum("shardtrain_trainer_step_seconds_count", t, "part=\"compute\""));
      double loss = after.sum("shardtrain_trainer_loss", t);
      assertTrue(loss > 0 && loss < 2, t + " loss " + loss);
    }
    double examples = after.sum("shardtrain_trainer_examples_total");
    assertTrue(examples > during.sum("shardtrain_trainer_examples_total"));
    assertEquals(examplesReported, examples, "examples the master recorded");
  }

  @Test
  void everyMetricTheGrafanaDashboardQueriesIsOneTheNodeExports() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(Files.readString(DASHBOARD));
    List<String> exprs = new ArrayList<>();
    for (JsonNode panel : dashboard.get("panels")) {
      for (JsonNode target : panel.path("targets")) exprs.add(target.get("expr").asText());
    }
    assertTrue(exprs.size() >= 10, "queries: " + exprs);
    Pattern metric = Pattern.compile("\\b(?:shardtrain|jvm|process|system)_[a-zA-Z0-9_]+");
    TreeSet<String> queried = new TreeSet<>();
    for (String e : exprs) {
      Matcher m = metric.matcher(e);
      while (m.find()) queried.add(m.group());
    }
    TreeSet<String> missing = new TreeSet<>(queried);
    missing.removeAll(exported);
    assertEquals(new TreeSet<>(), missing, "queried by the dashboard but not exported; exported: " + exported);
    assertTrue(queried.containsAll(List.of("shardtrain_block_pushes_total", "shardtrain_trainer_step_seconds_sum",
        "shardtrain_trainer_examples_total", "shardtrain_cluster_members", "shardtrain_block_barrier_missing")),
        queried.toString());
  }

  @Test
  void theParserRefusesWhatIsNotPrometheusText() {
    assertThrows(IllegalArgumentException.class, () -> PrometheusText.parse("# TYPE a counter\na_total{x=1} 2\n"));
    assertThrows(IllegalArgumentException.class, () -> PrometheusText.parse("b 1\n"));
    assertEquals(2.0, PrometheusText.parse("# TYPE a counter\na_total{x=\"1\"} 2\n").sum("a_total", "x=\"1\""));
  }
}
