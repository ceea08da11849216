package io.shardtrain.actors.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class CtrSettingsTest {
  private static CtrSettings with(String hocon) {
    return CtrSettings.fromConfig(ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
  }

  @Test
  void defaultsAreTheAcceptanceShape() {
    CtrSettings s = with("");
    assertEquals(1_000_000, s.examples());
    assertEquals(26, s.fields());
    assertEquals(13, s.denseDim());
    assertEquals(1 << 20, s.hashSpace());
    assertEquals(8, s.factors());
    assertEquals(0.5, s.rowLr(), 1e-12);
    assertEquals(10_000, s.aucBins());
  }

  @Test
  void badValuesAreRefusedNamingTheKey() {
    assertEquals("shardtrain.train.ctr.factors must be >= 1, not 0",
        assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.ctr.factors = 0")).getMessage());
    assertEquals("shardtrain.train.ctr.fields, vocabulary and hash-space must be >= 1 and dense-dim >= 0, not 0, 1000,"
        + " 1048576 and 13",
        assertThrows(IllegalArgumentException.class, () -> with("shardtrain.train.ctr.fields = 0")).getMessage());
    assertEquals("shardtrain.train.ctr.criteo-test-fraction must be in (0, 1), not 1.0",
        assertThrows(IllegalArgumentException.class,
            () -> with("shardtrain.train.ctr.criteo-test-fraction = 1")).getMessage());
  }
}
