package io.shardtrain.actors.security;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The committed test key material under {@code src/test/resources/tls} (its README says how
 * scripts/make-certs.sh made it): {@code cluster}, the cluster's CA and nodes {@code node1},
 * {@code node2}; {@code rogue}, another CA and its {@code node1}.
 */
public final class TlsTestStores {
  private TlsTestStores() {}

  /** The folder of one CA's stores: "cluster" or "rogue". */
  public static Path dir(String ca) {
    try {
      return Path.of(TlsTestStores.class.getResource("/tls/" + ca + "/truststore.p12").toURI()).getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code node}'s settings under CA {@code ca}, security on; {@code node} null: a client without a key. */
  public static SecuritySettings settings(String ca, String node) {
    Path d = dir(ca);
    String password = read(d.resolve("password"));
    String keyStore = node == null ? "" : d.resolve(node + ".p12").toString();
    return new SecuritySettings(true, keyStore, node == null ? "" : password, d.resolve("truststore.p12").toString(),
        password, d.resolve("token").toString());
  }

  /** The same as {@code shardtrain.security} configuration. */
  public static Config config(String ca, String node) {
    SecuritySettings s = settings(ca, node);
    return ConfigFactory.parseMap(Map.of(
        "shardtrain.security.enabled", true,
        "shardtrain.security.key-store", s.keyStore(),
        "shardtrain.security.key-store-password", s.keyStorePassword(),
        "shardtrain.security.trust-store", s.trustStore(),
        "shardtrain.security.trust-store-password", s.trustStorePassword(),
        "shardtrain.security.token-file", s.tokenFile()));
  }

  public static String token(String ca) {
    return read(dir(ca).resolve("token"));
  }

  private static String read(Path p) {
    try {
      return Files.readString(p).trim();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
