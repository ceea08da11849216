package io.shardtrain.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;

import org.junit.jupiter.api.Test;

class AkkaVersionGuardTest {
  @Test
  void resolvedAkkaIsExactly285() {
    assertEquals("2.8.5", akka.Version.current());
    assertDoesNotThrow(AkkaVersionGuard::require);
  }
}
