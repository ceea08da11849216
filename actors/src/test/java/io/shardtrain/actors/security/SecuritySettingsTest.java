package io.shardtrain.actors.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecuritySettingsTest {
  @TempDir Path tmp;

  @Test
  void securityIsOffByDefaultAndLeavesArteryPlain() {
    Config defaults = ConfigFactory.load();
    assertFalse(SecuritySettings.fromConfig(defaults).enabled());
    assertSame(defaults, SecuritySettings.withArtery(defaults));
    assertEquals("tcp", ConfigFactory.parseResources("cluster.conf").withFallback(defaults).resolve()
        .getString("akka.remote.artery.transport"));
  }

  @Test
  void turnedOnArteryRunsTlsWithMutualAuthenticationOnTheGivenStores() {
    Config c = SecuritySettings.withArtery(TlsTestStores.config("cluster", "node1").withFallback(ConfigFactory.load()));
    assertEquals("tls-tcp", c.getString("akka.remote.artery.transport"));
    Config engine = c.getConfig("akka.remote.artery.ssl.config-ssl-engine");
    assertTrue(engine.getBoolean("require-mutual-authentication"));
    assertEquals(TlsTestStores.dir("cluster").resolve("node1.p12").toString(), engine.getString("key-store"));
    assertEquals(TlsTestStores.dir("cluster").resolve("truststore.p12").toString(), engine.getString("trust-store"));
  }

  @Test
  void aMissingStoreAWrongPasswordOrAnEmptyTokenIsNamedWithItsSetting() throws Exception {
    SecuritySettings good = TlsTestStores.settings("cluster", "node1");
    String missing = tmp.resolve("nope.p12").toString();
    var noFile = assertThrows(IllegalArgumentException.class, () -> new SecuritySettings(true, missing,
        good.keyStorePassword(), good.trustStore(), good.trustStorePassword(), good.tokenFile()).sslContext(true));
    assertTrue(noFile.getMessage().contains(missing) && noFile.getMessage().contains("shardtrain.security.key-store"),
        noFile.getMessage());

    var wrongPassword = assertThrows(IllegalArgumentException.class, () -> new SecuritySettings(true, good.keyStore(),
        good.keyStorePassword(), good.trustStore(), "wrong", good.tokenFile()).sslContext(true));
    assertTrue(wrongPassword.getMessage().contains(good.trustStore())
        && wrongPassword.getMessage().contains("shardtrain.security.trust-store-password"), wrongPassword.getMessage());

    var unset = assertThrows(IllegalArgumentException.class, () -> new SecuritySettings(true, "", "",
        good.trustStore(), good.trustStorePassword(), good.tokenFile()).arteryConfig());
    assertTrue(unset.getMessage().contains("shardtrain.security.key-store is not set"), unset.getMessage());

    Path empty = Files.writeString(tmp.resolve("token"), "  \n");
    var noToken = assertThrows(IllegalArgumentException.class, () -> new SecuritySettings(true, good.keyStore(),
        good.keyStorePassword(), good.trustStore(), good.trustStorePassword(), empty.toString()).token());
    assertTrue(noToken.getMessage().contains(empty.toString()) && noToken.getMessage().contains("token-file"),
        noToken.getMessage());
    assertEquals(TlsTestStores.token("cluster"), good.token());
    assertFalse(good.toString().contains(good.keyStorePassword()), good.toString());
  }
}
