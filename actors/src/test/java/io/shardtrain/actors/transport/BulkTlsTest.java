package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.LoggingTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.actors.security.TlsTestStores;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The bulk channel with {@code shardtrain.security.enabled}: letters cross between two nodes over
 * TLS; a connection that does not authenticate with a key the cluster's CA signed (plain TCP, or
 * TLS with another CA's key) is closed in the handshake, and a well-formed letter it sends is
 * never delivered.
 */
class BulkTlsTest {
  private static ActorTestKit kitA;
  private static ActorTestKit kitB;

  private static Config config(String node) {
    return ConfigFactory.parseString("""
            akka.loglevel = INFO
            akka.actor.provider = remote
            akka.remote.artery.canonical.hostname = 127.0.0.1
            akka.remote.artery.canonical.port = 0
            akka.remote.warn-about-direct-use = off
            akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
            shardtrain.transport.bulk.host = "127.0.0.1"
            """)
        .withFallback(TlsTestStores.config("cluster", node)).withFallback(ConfigFactory.load());
  }

  @BeforeAll
  static void start() {
    kitA = ActorTestKit.create("bulkTlsA", config("node1"));
    kitB = ActorTestKit.create("bulkTlsB", config("node2"));
  }

  @AfterAll
  static void stop() {
    kitA.shutdownTestKit();
    kitB.shutdownTestKit();
  }

  private static ActorRef<Object> seenFromA(ActorRef<Object> ref) {
    return ActorRefResolver.get(kitA.system())
        .resolveActorRef(ActorRefResolver.get(kitB.system()).toSerializationFormat(ref));
  }

  @Test
  void aLetterCrossesBetweenNodesWithTheClusterKeysOverTls() throws Exception {
    TestProbe<Object> probe = kitB.createTestProbe();
    float[] values = {1f, -2.5f, Float.MIN_VALUE, 3e30f};
    BulkTransport.get(kitA.system())
        .sendLetter(BulkTransport.get(kitB.system()).address(),
            new BulkTransportTest.Note(seenFromA(probe.ref()), "over tls", null), values, 0, values.length)
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    BulkTransportTest.Opened opened = probe.expectMessageClass(BulkTransportTest.Opened.class, Duration.ofSeconds(10));
    assertEquals("over tls", opened.text());
    assertArrayEquals(values, opened.values());
  }

  @Test
  void aConnectionWithoutAClusterKeyIsClosedBeforeItsLetterIsRead() throws Exception {
    TestProbe<Object> probe = kitB.createTestProbe();
    InetSocketAddress b = BulkTransport.get(kitB.system()).address();
    byte[] letter = letterFrame(new BulkTransportTest.Note(seenFromA(probe.ref()), "stranger", null));

    LoggingTestKit.warn("refused before any letter").withOccurrences(2).expect(kitB.system(), () -> {
      // Plain TCP: a well-formed letter, which a node without security would deliver.
      try (Socket plain = new Socket()) {
        plain.connect(b, 5000);
        plain.getOutputStream().write(letter);
        assertClosedByPeer(plain);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
      // TLS that trusts the cluster but presents a key another CA signed.
      SecuritySettings rogue = TlsTestStores.settings("rogue", "node1");
      SecuritySettings cluster = TlsTestStores.settings("cluster", null);
      SecuritySettings withClusterTrust = new SecuritySettings(true, rogue.keyStore(), rogue.keyStorePassword(),
          cluster.trustStore(), cluster.trustStorePassword(), "");
      assertThrows(IOException.class, () -> {
        try (SSLSocket tls = (SSLSocket) withClusterTrust.sslContext(true).getSocketFactory()
            .createSocket(b.getAddress(), b.getPort())) {
          tls.setSoTimeout(10_000);
          tls.startHandshake();
          tls.getOutputStream().write(letter);
          if (tls.getInputStream().read() < 0) throw new IOException("closed by the node");
        }
      });
      return null;
    });
    probe.expectNoMessage(Duration.ofMillis(300));
  }

  /** {@code note} as one letter frame with two floats, as BulkConnections writes it. */
  private static byte[] letterFrame(BulkTransport.Letter note) throws IOException {
    Serialization serialization = SerializationExtension.get(kitA.system().classicSystem());
    Serializer serializer = serialization.findSerializerFor(note);
    byte[] bytes = serialization.serialize(note).get();
    byte[] manifest = Serializers.manifestFor(serializer, note).getBytes(StandardCharsets.UTF_8);
    var out = new java.io.ByteArrayOutputStream();
    BulkFrames.writeLetter(Channels.newChannel(out), BulkFrames.newBuffer(), serializer.identifier(), manifest, bytes,
        new float[] {1f, 2f}, 0, 2, WirePrecision.FP32);
    return out.toByteArray();
  }

  private static void assertClosedByPeer(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    try {
      while (s.getInputStream().read() >= 0) {
        // A TLS alert may come first; then the end.
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the node kept a connection open that did not authenticate");
    } catch (SocketException e) {
      // Reset by the node: closed too.
    }
  }
}
