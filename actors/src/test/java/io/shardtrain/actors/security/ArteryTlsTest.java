package io.shardtrain.actors.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ActorIdentity;
import akka.actor.Address;
import akka.actor.Identify;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.LoggingTestKit;
import akka.cluster.Member;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.pattern.Patterns;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.stream.StreamSupport;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Artery over TLS with mutual authentication ({@code shardtrain.security.enabled}): two nodes
 * whose keys the cluster's CA signed form a cluster; a node whose key another CA signed never
 * joins; and the crafted frame that sends a plain-TCP node's Artery decoder into an endless loop
 * (docs/OPERATIONS.md, section 12) dies in the TLS handshake.
 */
class ArteryTlsTest {
  private static final String NAME = "ArteryTlsTest";
  private static final Duration JOIN = Duration.ofSeconds(20);
  private static ActorTestKit first;
  private static ActorTestKit second;

  static Config config(String ca, String node) {
    Config base = ConfigFactory.parseString("""
        akka.actor.provider = cluster
        akka.remote.artery.canonical.hostname = 127.0.0.1
        akka.remote.artery.canonical.port = 0
        akka.cluster.jmx.multi-mbeans-in-same-jvm = on
        akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        akka.cluster.downing-provider-class = ""
        """).withFallback(TlsTestStores.config(ca, node)).withFallback(ConfigFactory.load());
    return SecuritySettings.withArtery(base);
  }

  @BeforeAll
  static void cluster() throws Exception {
    first = ActorTestKit.create(NAME, config("cluster", "node1"));
    second = ActorTestKit.create(NAME, config("cluster", "node2"));
    Address seed = Cluster.get(first.system()).selfMember().address();
    Cluster.get(first.system()).manager().tell(Join.create(seed));
    Cluster.get(second.system()).manager().tell(Join.create(seed));
    awaitUpMembers(first, 2, JOIN);
  }

  /**
   * A node that refused a TLS handshake closes that connection's streams on its way down, which on a
   * loaded machine has taken longer than the testkit's default 10 s.
   */
  private static void stop(ActorTestKit kit) {
    ActorTestKit.shutdown(kit.system(), java.time.Duration.ofSeconds(30), true);
  }

  /**
   * Both nodes at once: a node's TLS streams to its peer end when the peer's end closes too, and the
   * second node, stopped alone while the first kept its end open, once took over 30 s (in CI).
   */
  @AfterAll
  static void shutdown() {
    if (second != null) second.system().terminate();
    if (first != null) first.system().terminate();
    if (second != null) stop(second);
    if (first != null) stop(first);
  }

  @Test
  void nodesSignedByTheClusterCaFormAClusterOverTls() {
    assertEquals("tls-tcp", first.system().settings().config().getString("akka.remote.artery.transport"));
    assertEquals(2, upMembers(first));
    assertEquals(2, upMembers(second));
  }

  @Test
  void aNodeWhoseKeyAnotherCaSignedCannotJoin() throws Exception {
    ActorTestKit rogue = ActorTestKit.create(NAME, config("rogue", "node1"));
    try {
      Address seed = Cluster.get(first.system()).selfMember().address();
      Cluster.get(rogue.system()).manager().tell(Join.create(seed));
      // The trusted second node took well under this to join (the handshake is the same).
      Thread.sleep(4000);
      Address rogueAddress = Cluster.get(rogue.system()).selfMember().address();
      boolean known = StreamSupport.stream(Cluster.get(first.system()).state().getMembers().spliterator(), false)
          .anyMatch(m -> m.address().equals(rogueAddress));
      assertFalse(known, "the seed must not know the rogue node " + rogueAddress);
      assertFalse(Cluster.get(rogue.system()).selfMember().status() == MemberStatus.up(), "rogue node became Up");
      assertEquals(2, upMembers(first));
    } finally {
      stop(rogue);
    }
  }

  @Test
  void theCraftedArteryFrameDiesInTheHandshakeAndTheNodeKeepsWorking() throws Exception {
    int port = Cluster.get(first.system()).selfMember().address().getPort().get();
    LoggingTestKit.custom(e -> e.message().contains("Dropping message due to unexpected error"))
        .withOccurrences(0)
        .expect(first.system(), () -> {
          try {
            sendCraftedFramesThenProbe(port);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          return null;
        });
  }

  private static void sendCraftedFramesThenProbe(int port) throws Exception {
    // Plain TCP: the TLS stage reads the frame as a broken handshake record and closes.
    try (Socket plain = new Socket()) {
      plain.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      plain.getOutputStream().write(craftedFrame());
      assertClosedByPeer(plain);
    }
    // TLS that trusts the CA but shows no key: mutual authentication refuses it.
    SSLSocket tls = (SSLSocket) TlsTestStores.settings("cluster", null).sslContext(false).getSocketFactory()
        .createSocket("127.0.0.1", port);
    try (tls) {
      tls.setSoTimeout(10_000);
      assertThrows(IOException.class, () -> {
        tls.startHandshake();
        tls.getOutputStream().write(craftedFrame());
        tls.getOutputStream().flush();
        if (tls.getInputStream().read() < 0) throw new IOException("closed by the node");
      });
    }
    // The node still talks to its peer over Artery.
    Object reply = Patterns.ask(second.system().classicSystem().actorSelection(
            Cluster.get(first.system()).selfMember().address() + "/system/cluster/core/daemon"),
        new Identify("probe"), Duration.ofSeconds(10)).toCompletableFuture().get();
    assertTrue(((ActorIdentity) reply).getActorRef().isPresent(), "the node's cluster daemon answers");
    Thread.sleep(1000);
    assertEquals(2, upMembers(first));
  }

  /** ASCII "AKKA", stream id 1, a little-endian frame length of 0x7fffffff, 8 zero bytes. */
  static byte[] craftedFrame() {
    return ByteBuffer.allocate(17).order(ByteOrder.LITTLE_ENDIAN)
        .put(new byte[] {'A', 'K', 'K', 'A', 1}).putInt(0x7fffffff).put(new byte[8]).array();
  }

  private static void assertClosedByPeer(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    InputStream in = s.getInputStream();
    try {
      // A TLS alert may come first; then the end.
      while (in.read() >= 0) {
        // drain
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the node kept a connection open that sent it no TLS handshake");
    } catch (SSLException | java.net.SocketException e) {
      // Reset by the node: closed too.
    }
  }

  private static long upMembers(ActorTestKit kit) {
    return StreamSupport.stream(Cluster.get(kit.system()).state().getMembers().spliterator(), false)
        .map(Member::status).filter(MemberStatus.up()::equals).count();
  }

  private static void awaitUpMembers(ActorTestKit kit, int n, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (upMembers(kit) < n) {
      if (System.nanoTime() > deadline) throw new AssertionError(n + " members not Up within " + within);
      Thread.sleep(100);
    }
  }
}
