package io.shardtrain.actors.security;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS and authentication of a node's ports, read once from {@code shardtrain.security}. Off, every
 * port speaks plaintext to whoever reaches it (fine on loopback); on, Artery runs over TLS with
 * mutual authentication ({@link #arteryConfig}), the bulk channel over TLS with the same key and
 * trust stores ({@link #sslContext}), and the gRPC API over TLS with a bearer token
 * ({@link #token}) on every call. Store paths are checked when first used, and an error names the
 * path and the setting.
 */
public record SecuritySettings(boolean enabled, String keyStore, String keyStorePassword, String trustStore,
    String trustStorePassword, String tokenFile) {

  static final String PREFIX = "shardtrain.security.";
  /** Artery's TLS: 1.2 with forward-secret AES-GCM suites, which its TLS stage and the JDK both handle. */
  static final String ARTERY_PROTOCOL = "TLSv1.2";
  static final List<String> CIPHER_SUITES = List.of(
      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");

  public SecuritySettings {
    if (keyStore == null || keyStorePassword == null || trustStore == null || trustStorePassword == null
        || tokenFile == null) {
      throw new IllegalArgumentException("shardtrain.security paths and passwords must not be null (use \"\")");
    }
  }

  /** Without the passwords, which a log line or an error must not carry. */
  @Override
  public String toString() {
    return "SecuritySettings[enabled=" + enabled + ", keyStore=" + keyStore + ", trustStore=" + trustStore
        + ", tokenFile=" + tokenFile + "]";
  }

  /** Security off: the default. */
  public static SecuritySettings off() {
    return new SecuritySettings(false, "", "", "", "", "");
  }

  public static SecuritySettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static SecuritySettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.security");
    return new SecuritySettings(c.getBoolean("enabled"), c.getString("key-store").trim(),
        c.getString("key-store-password"), c.getString("trust-store").trim(), c.getString("trust-store-password"),
        c.getString("token-file").trim());
  }

  /**
   * {@code config} with Akka's remoting switched to TLS when security is on (unchanged when off):
   * to be used as the ActorSystem's configuration, since Artery reads its transport only at start.
   */
  public static Config withArtery(Config config) {
    SecuritySettings s = fromConfig(config);
    return s.enabled() ? s.arteryConfig().withFallback(config) : config;
  }

  /**
   * Akka's remoting over TLS with these stores: {@code tls-tcp}, and mutual authentication, so a
   * node whose certificate the trust store's CA did not sign is refused in the handshake, before
   * Artery reads a byte of it. The stores are opened here once, so a wrong path or password fails
   * with the setting's name rather than deep inside Akka.
   */
  public Config arteryConfig() {
    requireEnabled();
    sslContext(true);
    String engine = "akka.remote.artery.ssl.config-ssl-engine.";
    Map<String, Object> m = new HashMap<>();
    m.put("akka.remote.artery.transport", "tls-tcp");
    m.put("akka.remote.artery.ssl.ssl-engine-provider", "akka.remote.artery.tcp.ConfigSSLEngineProvider");
    m.put(engine + "key-store", Path.of(keyStore).toAbsolutePath().toString());
    m.put(engine + "key-store-password", keyStorePassword);
    m.put(engine + "key-password", keyStorePassword);
    m.put(engine + "trust-store", Path.of(trustStore).toAbsolutePath().toString());
    m.put(engine + "trust-store-password", trustStorePassword);
    m.put(engine + "protocol", ARTERY_PROTOCOL);
    m.put(engine + "enabled-algorithms", CIPHER_SUITES);
    m.put(engine + "require-mutual-authentication", true);
    return ConfigFactory.parseMap(m, "shardtrain.security");
  }

  /**
   * A TLS context trusting the trust store's CA and, when {@code withKey}, presenting the key
   * store's key (a node must; a client that authenticates with the token need not).
   *
   * @throws IllegalArgumentException naming the setting and path of a store that is not set, does
   *     not exist or does not open with its password
   */
  public SSLContext sslContext(boolean withKey) {
    requireEnabled();
    try {
      KeyManagerFactory kmf = null;
      if (withKey) {
        KeyStore keys = load("key-store", keyStore, keyStorePassword);
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, keyStorePassword.toCharArray());
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(kmf == null ? null : kmf.getKeyManagers(), trustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot set up TLS from " + PREFIX + "key-store " + keyStore + " and "
          + PREFIX + "trust-store " + trustStore + ": " + e.getMessage(), e);
    }
  }

  /** What trusts the trust store's CA, for a client that builds its own TLS (a gRPC channel). */
  public TrustManager[] trustManagers() {
    requireEnabled();
    try {
      KeyStore trusted = load("trust-store", trustStore, trustStorePassword);
      if (trusted.size() == 0) {
        throw new IllegalArgumentException("the trust store " + trustStore + " (" + PREFIX
            + "trust-store) holds no certificate");
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trusted);
      return tmf.getTrustManagers();
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot set up TLS from " + PREFIX + "trust-store " + trustStore + ": "
          + e.getMessage(), e);
    }
  }

  /** The bearer token gRPC calls carry, read from {@code token-file}. */
  public String token() {
    requireEnabled();
    Path file = existing("token-file", tokenFile);
    try {
      String token = Files.readString(file, StandardCharsets.UTF_8).trim();
      if (token.isEmpty()) {
        throw new IllegalArgumentException("the token file " + file + " (" + PREFIX + "token-file) is empty");
      }
      return token;
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the token file " + file + " (" + PREFIX + "token-file): "
          + e.getMessage(), e);
    }
  }

  private static KeyStore load(String setting, String path, String password) throws GeneralSecurityException {
    Path file = existing(setting, path);
    // PKCS12, what scripts/make-certs.sh writes; the JDK's PKCS12 store also reads JKS files.
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      store.load(in, password.toCharArray());
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot open " + file + " (" + PREFIX + setting + ") with "
          + PREFIX + setting + "-password: " + e.getMessage(), e);
    }
    return store;
  }

  private static Path existing(String setting, String path) {
    if (path.isEmpty()) {
      throw new IllegalArgumentException(PREFIX + setting + " is not set, and " + PREFIX + "enabled is on");
    }
    Path file = Path.of(path);
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("no file " + file.toAbsolutePath() + " (" + PREFIX + setting + ")");
    }
    return file;
  }

  private void requireEnabled() {
    if (!enabled) throw new IllegalStateException(PREFIX + "enabled is off: no TLS context or token");
  }
}
