package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.http.javadsl.settings.ServerSettings;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class GrpcServerTest {
  static ServerSettings listener(String hocon) {
    Config config = ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve();
    return GrpcServer.listenerSettings(config);
  }

  @Test
  void theListenersIdleTimeoutOutlastsACheckpointsWaitSoTheCallsOwnErrorArrivesFirst() {
    // Akka HTTP's default 60 s against a checkpoint's 120 s + 20 s (the defaults): raised to 150 s.
    ServerSettings defaults = listener("");
    assertEquals(150_000, defaults.getTimeouts().idleTimeout().toMillis());
    assertTrue(defaults.http2Enabled(), "gRPC needs HTTP/2");
    ServerSettings shortWaits = listener("""
        akka.http.server.idle-timeout = 1s
        shardtrain.checkpoint.timeout = 3s
        shardtrain.trainer.ask-timeout = 2s
        """);
    assertEquals(15_000, shortWaits.getTimeouts().idleTimeout().toMillis());
  }

  @Test
  void aLongerOrInfiniteIdleTimeoutIsKept() {
    assertEquals(600_000, listener("akka.http.server.idle-timeout = 10m").getTimeouts().idleTimeout().toMillis());
    assertFalse(listener("akka.http.server.idle-timeout = infinite").getTimeouts().idleTimeout().isFinite());
  }
}
