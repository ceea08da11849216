package io.shardtrain.actors.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExposureTest {
  private static Exposure.Listener listener(String name, String host, boolean tls) {
    return new Exposure.Listener(name, InetSocketAddress.createUnresolved(host, 25520), tls);
  }

  @Test
  void listenersOnLoopbackGiveNoWarning() {
    assertEquals(java.util.Optional.empty(), Exposure.warning(List.of(listener("Artery", "127.0.0.1", false),
        listener("bulk channel", "localhost", false), listener("gRPC API", "::1", false))));
  }

  @Test
  void aListenerBeyondLoopbackWithoutTlsIsNamedInOneLine() {
    String line = Exposure.warning(List.of(listener("Artery", "0.0.0.0", false),
        listener("bulk channel", "127.0.0.1", false), listener("metrics", "0.0.0.0", false))).orElseThrow();
    assertTrue(line.contains("Artery 0.0.0.0:25520") && line.contains("metrics 0.0.0.0:25520"), line);
    assertFalse(line.contains("bulk channel"), line);
    assertFalse(line.contains("\n"), line);
  }

  @Test
  void listenersBeyondLoopbackWithTlsGiveNoWarning() {
    assertEquals(java.util.Optional.empty(), Exposure.warning(List.of(listener("Artery", "0.0.0.0", true),
        listener("gRPC API", "0.0.0.0", true))));
  }
}
