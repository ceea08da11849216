package io.shardtrain.actors.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The meters of blocks and trainers as a Prometheus server reads them, on a registry without an ActorSystem. */
class MetersTest {
  private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)");

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final BarrierRows barriers = new BarrierRows(registry);
  private final NodeTraffic traffic = new NodeTraffic();

  /** Every sample of the scrape, keyed {@code name{labels}} as the text has it. */
  private Map<String, Double> scrape() {
    barriers.refresh();
    Map<String, Double> samples = new HashMap<>();
    for (String line : registry.scrape().split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) continue;
      Matcher m = SAMPLE.matcher(line);
      assertTrue(m.matches(), "not a sample line: " + line);
      samples.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
    }
    return samples;
  }

  @Test
  void blockPushesPullsAndTheirBytesAreCountedPerBlock() {
    BlockMeters w = BlockMeters.of(registry, barriers, traffic, "dense1.weight#0");
    BlockMeters b = BlockMeters.of(registry, barriers, traffic, "dense1.bias#0");
    for (int i = 0; i < 3; i++) w.pushed(1000);
    b.pushed(8);
    w.pulled(1000);
    w.pulled(1000);
    Map<String, Double> s = scrape();
    assertEquals(3.0, s.get("shardtrain_block_pushes_total{block=\"dense1.weight#0\"}"), s.toString());
    assertEquals(12_000.0, s.get("shardtrain_block_push_bytes_total{block=\"dense1.weight#0\"}"));
    assertEquals(1.0, s.get("shardtrain_block_pushes_total{block=\"dense1.bias#0\"}"));
    assertEquals(32.0, s.get("shardtrain_block_push_bytes_total{block=\"dense1.bias#0\"}"));
    assertEquals(2.0, s.get("shardtrain_block_pulls_total{block=\"dense1.weight#0\"}"));
    assertEquals(8_000.0, s.get("shardtrain_block_pull_bytes_total{block=\"dense1.weight#0\"}"));
    assertEquals(0.0, s.get("shardtrain_block_pulls_total{block=\"dense1.bias#0\"}"));
  }

  @Test
  void aClosedBlocksSeriesLeaveTheExportAndStartAgainFromZeroWhenItComesBack() {
    BlockMeters w = BlockMeters.of(registry, barriers, traffic, "gone#0");
    w.pushed(10);
    w.waitingFor(java.util.List.of("t1"));
    w.close();
    Map<String, Double> s = scrape();
    assertTrue(s.keySet().stream().noneMatch(k -> k.contains("gone#0")), s.toString());
    BlockMeters.of(registry, barriers, traffic, "gone#0").pushed(10);
    assertEquals(1.0, scrape().get("shardtrain_block_pushes_total{block=\"gone#0\"}"));
  }

  @Test
  void applyJournalAndBarrierTimesAreSecondsWithTheirCounts() {
    BlockMeters w = BlockMeters.of(registry, barriers, traffic, "w#0");
    w.applied(2_000_000);
    w.applied(4_000_000);
    w.journaled(10_000_000);
    w.barrierClosed(250_000_000);
    Map<String, Double> s = scrape();
    assertEquals(2.0, s.get("shardtrain_block_apply_seconds_count{block=\"w#0\"}"));
    assertEquals(0.006, s.get("shardtrain_block_apply_seconds_sum{block=\"w#0\"}"), 1e-12);
    assertEquals(0.004, s.get("shardtrain_block_apply_seconds_max{block=\"w#0\"}"), 1e-12);
    assertEquals(1.0, s.get("shardtrain_block_journal_write_seconds_count{block=\"w#0\"}"));
    assertEquals(0.01, s.get("shardtrain_block_journal_write_seconds_sum{block=\"w#0\"}"), 1e-12);
    assertEquals(0.25, s.get("shardtrain_block_barrier_wait_seconds_sum{block=\"w#0\"}"), 1e-12);
  }

  @Test
  void aBarrierShowsTheTrainersItWaitsForUntilItClosesAndNoLonger() {
    BlockMeters w = BlockMeters.of(registry, barriers, traffic, "w#0");
    BlockMeters b = BlockMeters.of(registry, barriers, traffic, "b#0");
    w.waitingFor(List.of("t2", "t3"));
    b.waitingFor(List.of("t3"));
    Map<String, Double> s = scrape();
    assertEquals(1.0, s.get("shardtrain_block_barrier_missing{block=\"w#0\",trainer=\"t2\"}"), s.toString());
    assertEquals(1.0, s.get("shardtrain_block_barrier_missing{block=\"w#0\",trainer=\"t3\"}"));
    assertEquals(1.0, s.get("shardtrain_block_barrier_missing{block=\"b#0\",trainer=\"t3\"}"));
    assertEquals(3, s.keySet().stream().filter(k -> k.startsWith("shardtrain_block_barrier_missing{")).count());

    w.waitingFor(List.of());
    s = scrape();
    assertFalse(s.containsKey("shardtrain_block_barrier_missing{block=\"w#0\",trainer=\"t2\"}"), s.toString());
    assertEquals(1, s.keySet().stream().filter(k -> k.startsWith("shardtrain_block_barrier_missing{")).count());
  }

  @Test
  void aTrainersStepPartsExamplesAndLastLossAreItsOwn() {
    TrainerMeters t1 = TrainerMeters.of(registry, traffic, "t1");
    TrainerMeters t2 = TrainerMeters.of(registry, traffic, "t2");
    t1.step(30_000_000, 5_000_000, 10_000_000, 0);
    t1.step(20_000_000, 5_000_000, 10_000_000, 1_000_000);
    t1.trained(64, 2.25f);
    t1.trained(64, 1.5f);
    t2.trained(32, 0.75f);
    Map<String, Double> s = scrape();
    assertEquals(2.0, s.get("shardtrain_trainer_step_seconds_count{part=\"compute\",trainer=\"t1\"}"), s.toString());
    assertEquals(0.05, s.get("shardtrain_trainer_step_seconds_sum{part=\"compute\",trainer=\"t1\"}"), 1e-12);
    assertEquals(0.01, s.get("shardtrain_trainer_step_seconds_sum{part=\"push_wait\",trainer=\"t1\"}"), 1e-12);
    assertEquals(0.02, s.get("shardtrain_trainer_step_seconds_sum{part=\"pull_wait\",trainer=\"t1\"}"), 1e-12);
    assertEquals(0.001, s.get("shardtrain_trainer_step_seconds_sum{part=\"master_wait\",trainer=\"t1\"}"), 1e-12);
    assertEquals(128.0, s.get("shardtrain_trainer_examples_total{trainer=\"t1\"}"));
    assertEquals(1.5, s.get("shardtrain_trainer_loss{trainer=\"t1\"}"));
    assertEquals(32.0, s.get("shardtrain_trainer_examples_total{trainer=\"t2\"}"));
    assertEquals(0.75, s.get("shardtrain_trainer_loss{trainer=\"t2\"}"));
    assertEquals(0.0, s.get("shardtrain_trainer_step_seconds_count{part=\"compute\",trainer=\"t2\"}"));
  }

  @Test
  void theNodesTrafficAddsUpItsTrainersExamplesAndItsBlocksPushedAndPulledBytes() {
    BlockMeters w = BlockMeters.of(registry, barriers, traffic, "w#0");
    BlockMeters b = BlockMeters.of(registry, barriers, traffic, "b#0");
    TrainerMeters t1 = TrainerMeters.of(registry, traffic, "t1");
    TrainerMeters t2 = TrainerMeters.of(registry, traffic, "t2");
    w.pushed(1000);
    b.pushed(8);
    w.pulled(1000);
    t1.trained(64, 1f);
    t2.trained(32, 1f);
    NodeTraffic.Counts c = traffic.counts();
    assertEquals(96, c.examples());
    assertEquals(4 * (1000 + 8 + 1000), c.bytes());
    assertTrue(traffic.counts().uptimeNanos() >= c.uptimeNanos());
  }

  @Test
  void metricsAreOffUnlessAPortIsSetAndOnlyOnLoopbackByDefault() {
    MetricsSettings defaults = MetricsSettings.fromConfig(ConfigFactory.defaultReference());
    assertFalse(defaults.serves());
    assertEquals("127.0.0.1", defaults.host());
    MetricsSettings on = MetricsSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.metrics.port = 9464").withFallback(ConfigFactory.defaultReference()));
    assertTrue(on.serves());
    assertEquals(9464, on.port());
    assertThrows(IllegalArgumentException.class, () -> new MetricsSettings("127.0.0.1", -1));
    assertThrows(IllegalArgumentException.class, () -> new MetricsSettings("127.0.0.1", 70_000));
    assertThrows(IllegalArgumentException.class,
        () -> new MetricsSettings("127.0.0.1", 9464, java.time.Duration.ofSeconds(-1)));
  }

  @Test
  void clusterStatusNamesAreAkkasInSnakeCase() {
    assertEquals("weakly_up", ClusterMeters.name(akka.cluster.MemberStatus.weaklyUp()));
    assertEquals("up", ClusterMeters.name(akka.cluster.MemberStatus.up()));
  }
}
