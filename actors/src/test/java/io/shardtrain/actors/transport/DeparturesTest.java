package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.Address;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Down;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.transport.BulkTransportTest.Ask;
import io.shardtrain.actors.transport.BulkTransportTest.Asked;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two cluster members over loopback, the second downed by the first while its ActorSystem, and so
 * its bulk channel, stays up: what the removal alone does to asks by letter to it.
 */
class DeparturesTest {
  /** How long an ask would wait: far beyond what a test waits for its failure. */
  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration SOON = Duration.ofSeconds(20);
  private ActorTestKit x;
  private ActorTestKit y;

  private static Config config(String extra) {
    return ConfigFactory.parseString("""
            akka.loglevel = WARNING
            akka.actor.provider = cluster
            akka.remote.artery.canonical.hostname = 127.0.0.1
            akka.remote.artery.canonical.port = 0
            akka.cluster.jmx.multi-mbeans-in-same-jvm = on
            akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
            # A downed y stops its cluster daemon, and x removes it once it finds y unreachable:
            # about 2 s after the down, not Akka's 7 with its heartbeat pause and 1 s ticks.
            akka.cluster.failure-detector.heartbeat-interval = 300ms
            akka.cluster.failure-detector.acceptable-heartbeat-pause = 1500ms
            akka.cluster.failure-detector.first-heartbeat-estimate = 300ms
            akka.cluster.unreachable-nodes-reaper-interval = 250ms
            akka.cluster.leader-actions-interval = 250ms
            shardtrain.transport.bulk.host = "127.0.0.1"
            """ + extra)
        .withFallback(ConfigFactory.load());
  }

  @BeforeEach
  void cluster() throws Exception {
    x = ActorTestKit.create("DeparturesTest", config(""));
    // Downed, y keeps running: only the cluster can tell x that it is gone.
    y = ActorTestKit.create("DeparturesTest", config("akka.cluster.run-coordinated-shutdown-when-down = off\n"));
    Address first = Cluster.get(x.system()).selfMember().address();
    Cluster.get(x.system()).manager().tell(Join.create(first));
    Cluster.get(y.system()).manager().tell(Join.create(first));
    long deadline = System.nanoTime() + SOON.toNanos();
    while (upMembers() < 2) {
      assertTrue(System.nanoTime() < deadline, "the two members are not up");
      Thread.sleep(100);
    }
  }

  private long upMembers() {
    long up = 0;
    for (var m : Cluster.get(x.system()).state().getMembers()) if (m.status() == MemberStatus.up()) up++;
    return up;
  }

  @AfterEach
  void stop() {
    y.shutdownTestKit();
    x.shutdownTestKit();
  }

  private ActorRef<Object> onY(TestProbe<Object> probe) {
    return ActorRefResolver.get(x.system())
        .resolveActorRef(ActorRefResolver.get(y.system()).toSerializationFormat(probe.ref()));
  }

  private static Throwable failureWithin(CompletionStage<?> stage, Duration d) {
    return assertThrows(ExecutionException.class,
        () -> stage.toCompletableFuture().get(d.toMillis(), TimeUnit.MILLISECONDS)).getCause();
  }

  @Test
  void anAskByLetterFailsWithPeerGoneWhenTheClusterRemovesTheRecipientsNodeThoughItsConnectionStaysUp()
      throws Exception {
    BulkTransport bulk = BulkTransport.get(x.system());
    TestProbe<Object> silent = TestProbe.create(y.system());
    ActorRef<Object> recipient = onY(silent);
    CompletionStage<Integer> ask = bulk.<Integer>askWithStatus(BulkTransport.get(y.system()).address(),
        r -> new Ask(recipient, "ignore", r), new float[2], 0, 2, ASK_TIMEOUT);
    silent.expectMessageClass(Asked.class, SOON); // delivered, and never answered
    Address yAddress = Cluster.get(y.system()).selfMember().address();

    Cluster.get(x.system()).manager().tell(new Down(yAddress));

    Throwable gone = failureWithin(ask, SOON);
    assertInstanceOf(PeerGone.class, gone);
    assertTrue(gone.getMessage().contains("left the cluster"), gone.getMessage());
    assertTrue(Departures.get(x.system()).removed(yAddress));
    // A letter to the removed node fails before it is sent.
    Throwable late = failureWithin(bulk.<Integer>askWithStatus(BulkTransport.get(y.system()).address(),
        r -> new Ask(recipient, "ignore", r), new float[1], 0, 1, ASK_TIMEOUT), SOON);
    assertInstanceOf(PeerGone.class, late);
    silent.expectNoMessage(Duration.ofMillis(300));
  }

  @Test
  void aStageFailsOnlyForARemovalOfItsNodeAfterItWasRegistered() throws Exception {
    Departures departures = Departures.get(x.system());
    Address yAddress = Cluster.get(y.system()).selfMember().address();
    CompletableFuture<Void> onX = new CompletableFuture<>();
    departures.failIfRemoved(Cluster.get(x.system()).selfMember().address(), onX);
    CompletableFuture<Void> before = new CompletableFuture<>();
    departures.failIfRemoved(yAddress, before);

    Cluster.get(x.system()).manager().tell(new Down(yAddress));

    assertInstanceOf(PeerGone.class, failureWithin(before, SOON));
    CompletableFuture<Void> after = new CompletableFuture<>();
    departures.failIfRemoved(yAddress, after);
    // A request sent after the removal goes where the cluster routes now.
    assertFalse(after.isDone());
    assertFalse(onX.isDone(), "another node's removal");
  }

  @Test
  void aStageWhoseNodeIsUnknownFailsAtAnyRemovalAfterItWasRegistered() throws Exception {
    Departures departures = Departures.get(x.system());
    CompletableFuture<Void> waiting = new CompletableFuture<>();
    departures.failIfAnyRemoved(waiting);
    CompletableFuture<Void> answered = new CompletableFuture<>();
    departures.failIfAnyRemoved(answered);
    answered.complete(null);

    Cluster.get(x.system()).manager().tell(new Down(Cluster.get(y.system()).selfMember().address()));

    Throwable gone = failureWithin(waiting, SOON);
    assertInstanceOf(PeerGone.class, gone);
    assertTrue(gone.getMessage().contains("the request goes again"), gone.getMessage());
    assertFalse(answered.isCompletedExceptionally(), "answered before the removal");
    CompletableFuture<Void> after = new CompletableFuture<>();
    departures.failIfAnyRemoved(after);
    Thread.sleep(1500);
    assertFalse(after.isDone(), "registered after the removal");
  }
}
