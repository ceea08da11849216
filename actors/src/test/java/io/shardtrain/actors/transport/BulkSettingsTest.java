package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
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
    assertEquals(1, s.minFloats());
    assertTrue(s.carries(1));
    assertTrue(!s.carries(0));
    assertTrue(!s.carries(16_777_217));
  }

  @Test
  void badValuesFailNamingTheKey() {
    var config = ConfigFactory.parseString("shardtrain.transport.bulk.port = 70000").withFallback(ConfigFactory.load());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(config));
    assertTrue(e.getMessage().contains("shardtrain.transport.bulk.port"), e.getMessage());
    var none = ConfigFactory.parseString("shardtrain.transport.bulk.max-floats = 0").withFallback(ConfigFactory.load());
    e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(none));
    assertTrue(e.getMessage().contains("max-floats"), e.getMessage());
    var negative = ConfigFactory.parseString("shardtrain.transport.bulk.min-floats = -1")
        .withFallback(ConfigFactory.load());
    e = assertThrows(IllegalArgumentException.class, () -> BulkSettings.fromConfig(negative));
    assertTrue(e.getMessage().contains("min-floats"), e.getMessage());
  }

  @Test
  void theClaimKeysOfTheRemovedTransferPathAreUnknownAndFailValidation() {
    for (String key : new String[] {"claim-timeout = 30s", "max-unclaimed-floats = 67108864"}) {
      var config = ConfigFactory.parseString("shardtrain.transport.bulk." + key).withFallback(ConfigFactory.load());
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ShardTrainConfig.validate(config));
      String name = key.substring(0, key.indexOf(' '));
      assertTrue(e.getMessage().contains("unknown configuration key 'shardtrain.transport.bulk." + name + "'"),
          e.getMessage());
    }
  }
}
