package io.shardtrain.samples.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {
  @Test
  void portsComeFromBelowTheEphemeralRangeOnceEachAndAreFree() throws Exception {
    Set<Integer> seen = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      int first = FreePorts.consecutive(2);
      for (int p = first; p < first + 2; p++) {
        assertTrue(p >= 20_000 && p < 32_768, "port " + p);
        assertTrue(seen.add(p), "port " + p + " given twice");
        try (ServerSocket s = new ServerSocket()) {
          s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p));
        }
      }
    }
  }
}
