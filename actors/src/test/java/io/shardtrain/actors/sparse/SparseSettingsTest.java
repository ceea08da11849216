package io.shardtrain.actors.sparse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SparseSettingsTest {

  @Test
  void theDefaultsOfReferenceConfAreReadOnce() {
    SparseSettings s = SparseSettings.fromConfig(ConfigFactory.load());
    assertEquals(new SparseSettings(50, 4 << 20, Duration.ofSeconds(30), 4, 262_144), s);
    // 4 MiB less the overhead, over rows of 16 floats and one slot plus id and step: 31,872 rows.
    assertEquals((4 * 1024 * 1024 - SparseSettings.EVENT_OVERHEAD) / (16 + 4 * 32), s.rowsPerEvent(16 + 4 * 32));
  }

  @Test
  void aWidthThatIsNoPowerOfTwoIsRefusedNamingTheKey() {
    var e = assertThrows(IllegalArgumentException.class, () -> SparseSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.sparse.sketch-width = 1000").withFallback(ConfigFactory.load())));
    assertTrue(e.getMessage().contains("sketch-width"), e.getMessage());
  }
}
