package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BulkSettingsTest {

  @Test
  void referenceDefaultsAreReadAndPassValidation() {
    var config = ConfigFactory.load();
    ShardTrainConfig.validate(config);
    BulkSettings s = BulkSettings.fromConfig(config);
    assertTrue(s.enabled());
    assertEquals("", s.host());
    assertEquals(0, s.port());
    assertEquals(16_777_216, s.maxFloats());
    assertEquals(67_108_864L, s.maxUnclaimedFloats());
    assertEquals(Duration.ofSeconds(30), s.claimTimeout());
    assertEquals(8192, s.minFloats());
    assertTrue(s.carries(8192));
    assertTrue(!s.carries(8191));
    assertTrue(!s.carries(16_777_217));
  }

  @Test
  void badValuesFailNamingTheKey() {
    var config = ConfigFactory.parseString("shardtrain.transport.bulk.port = 70000").withFallback(ConfigFactory.load());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(config));
    assertTrue(e.getMessage().contains("shardtrain.transport.bulk.port"), e.getMessage());
    var small = ConfigFactory.parseString("shardtrain.transport.bulk.max-unclaimed-floats = 10")
        .withFallback(ConfigFactory.load());
    e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(small));
    assertTrue(e.getMessage().contains("max-unclaimed-floats"), e.getMessage());
    var zero = ConfigFactory.parseString("shardtrain.transport.bulk.claim-timeout = 0s")
        .withFallback(ConfigFactory.load());
    e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(zero));
    assertTrue(e.getMessage().contains("claim-timeout"), e.getMessage());
  }
}
