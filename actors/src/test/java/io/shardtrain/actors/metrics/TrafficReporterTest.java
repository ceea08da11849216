package io.shardtrain.actors.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.pattern.Patterns;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A node's traffic as a view reads it: from the reporter at its well-known path, in messages that serialize. */
class TrafficReporterTest {
  static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("TrafficReporterTest");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void theReporterAnswersWhatTheNodesTrainersAndBlocksCounted() throws Exception {
    NodeMetrics node = NodeMetrics.get(kit.system());
    node.trainer("t1").trained(64, 0.5f);
    BlockMeters.of(kit.system(), "w#0").pushed(10);
    Object reply = Patterns.ask(kit.system().classicSystem().actorSelection("/system/" + TrafficReporter.NAME),
        new NodeTraffic.Read(), Duration.ofSeconds(5)).toCompletableFuture().get(10, TimeUnit.SECONDS);
    NodeTraffic.Counts counts = (NodeTraffic.Counts) reply;
    assertEquals(64, counts.examples());
    assertEquals(40, counts.bytes());
    assertTrue(counts.uptimeNanos() > 0, "uptime " + counts.uptimeNanos());
  }

  @Test
  void readAndCountsSerialize() {
    kit.serializationTestKit().verifySerialization(new NodeTraffic.Read(), true);
    kit.serializationTestKit().verifySerialization(new NodeTraffic.Counts(64, 40, 1_000_000_000L), true);
  }
}
