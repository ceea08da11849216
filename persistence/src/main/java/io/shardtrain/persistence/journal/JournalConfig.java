package io.shardtrain.persistence.journal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.HashMap;
import java.util.Map;

/**
 * Builds the Akka persistence configuration layer for a {@link JournalSettings}: the log journal
 * ({@link LogJournal}) with Akka's local snapshot files beside it, the jdbc journal and snapshot
 * store on one shared H2 or PostgreSQL pool (shared settings in the {@code persistence.conf}
 * fragment of cluster-config), or the in-memory journal and snapshot store of one ActorSystem
 * ({@link MemoryJournal}, {@link MemorySnapshotStore}). The layer
 * also repeats the {@code shardtrain.persistence.*} values it was built from, so
 * {@link JournalSettings#create} on the resulting system reads the same settings back.
 */
public final class JournalConfig {
  /** The shared database name under {@code akka-persistence-jdbc.shared-databases}. */
  public static final String SHARED_DB = "shardtrain";
  static final String SHARED_DB_PATH = "akka-persistence-jdbc.shared-databases." + SHARED_DB;
  static final String FRAGMENT = "persistence.conf";
  /** The plugins of the in-memory journal ({@link MemoryJournal}, {@link MemorySnapshotStore}), in reference.conf. */
  static final String MEMORY_JOURNAL = "shardtrain-memory-journal";
  static final String MEMORY_SNAPSHOT_STORE = "shardtrain-memory-snapshot-store";
  /** The journal of {@code journal = log} ({@link LogJournal}), in reference.conf; its snapshots are Akka's local files. */
  static final String LOG_JOURNAL = "shardtrain-log-journal";
  static final String LOCAL_SNAPSHOT_STORE = "akka.persistence.snapshot-store.local";

  private JournalConfig() {}

  /**
   * The persistence layer for {@code base}'s {@code shardtrain.persistence.*} settings, over
   * {@code base}, resolved: ready for {@code ActorSystem.create(behavior, name, config)}. Pass
   * {@code base} unresolved (or from {@code ConfigFactory.load(...)}): a {@code shardtrain.data-dir}
   * set in a layer over an already resolved config does not move the default {@code h2-path}.
   */
  public static Config of(Config base) {
    // load(base) = -D overrides, base, then the unresolved reference, resolved together: that is
    // what lets ${shardtrain.data-dir} in h2-path see base's data-dir.
    Config loaded = ConfigFactory.load(base);
    return forSettings(JournalSettings.fromConfig(loaded)).withFallback(loaded).resolve();
  }

  /** The unresolved layer for {@code settings}; put it over the application's configuration and resolve. */
  public static Config forSettings(JournalSettings settings) {
    Map<String, Object> m = new HashMap<>();
    m.put("shardtrain.persistence.journal", settings.kind().configName());
    m.put("shardtrain.persistence.h2-path", settings.h2Path().toString());
    m.put("shardtrain.persistence.h2-auto-server", settings.h2AutoServer());
    m.put("shardtrain.persistence.log-dir", settings.logDir().toString());
    m.put("shardtrain.persistence.log-segment-size", Long.toString(settings.logSegmentBytes()));
    m.put("shardtrain.persistence.log-fsync", settings.logFsync());
    m.put("shardtrain.persistence.h2-retention", settings.h2Retention().toMillis() + "ms");
    m.put("shardtrain.persistence.h2-write-delay", settings.h2WriteDelay().toMillis() + "ms");
    m.put("shardtrain.persistence.h2-code-at-c1", settings.h2CodeAtC1());
    m.put("shardtrain.persistence.postgres-url", settings.postgresUrl());
    m.put("shardtrain.persistence.postgres-user", settings.postgresUser());
    m.put("shardtrain.persistence.postgres-password", settings.postgresPassword());
    m.put("shardtrain.persistence.schema-timeout", settings.schemaTimeout().toMillis() + "ms");
    switch (settings.kind()) {
      case LOG -> {
        m.put("akka.persistence.journal.plugin", LOG_JOURNAL);
        m.put("akka.persistence.snapshot-store.plugin", LOCAL_SNAPSHOT_STORE);
        m.put(LOCAL_SNAPSHOT_STORE + ".dir", settings.logDir().resolve("snapshots").toString());
        return ConfigFactory.parseMap(m, "shardtrain log journal");
      }
      case MEMORY -> {
        m.put("akka.persistence.journal.plugin", MEMORY_JOURNAL);
        m.put("akka.persistence.snapshot-store.plugin", MEMORY_SNAPSHOT_STORE);
        return ConfigFactory.parseMap(m, "shardtrain memory journal");
      }
      case H2 -> {
        m.put(SHARED_DB_PATH + ".profile", "slick.jdbc.H2Profile$");
        m.put(SHARED_DB_PATH + ".db.driver", "org.h2.Driver");
        m.put(SHARED_DB_PATH + ".db.url", settings.jdbcUrl());
        m.put(SHARED_DB_PATH + ".db.user", "sa");
        m.put(SHARED_DB_PATH + ".db.password", "");
      }
      case POSTGRES -> {
        m.put(SHARED_DB_PATH + ".profile", "slick.jdbc.PostgresProfile$");
        m.put(SHARED_DB_PATH + ".db.driver", "org.postgresql.Driver");
        m.put(SHARED_DB_PATH + ".db.url", settings.jdbcUrl());
        m.put(SHARED_DB_PATH + ".db.user", settings.postgresUser());
        m.put(SHARED_DB_PATH + ".db.password", settings.postgresPassword());
      }
    }
    m.put("akka.persistence.journal.plugin", "jdbc-journal");
    m.put("akka.persistence.snapshot-store.plugin", "jdbc-snapshot-store");
    return ConfigFactory.parseMap(m, "shardtrain " + settings.kind().configName() + " journal")
        .withFallback(fragment());
  }

  /**
   * The {@code shardtrain.persistence.*} overrides that select the journal at {@code jdbcUrl}
   * ({@code --journal URL}): {@code jdbc:h2:[file:]PATH} or {@code jdbc:postgresql:...}. Credentials
   * and timeouts stay in the configuration. Use as {@code JournalConfig.of(forUrl(url).withFallback(config))}.
   */
  public static Config forUrl(String jdbcUrl) {
    if (jdbcUrl == null || jdbcUrl.isBlank()) {
      throw new IllegalArgumentException("journal URL is empty: expected jdbc:h2:PATH or jdbc:postgresql://HOST/DB");
    }
    String url = jdbcUrl.trim();
    Map<String, Object> m = new HashMap<>();
    if (url.startsWith("jdbc:postgresql:")) {
      m.put("shardtrain.persistence.journal", "postgres");
      m.put("shardtrain.persistence.postgres-url", url);
    } else if (url.startsWith("jdbc:h2:")) {
      String rest = url.substring("jdbc:h2:".length());
      if (rest.startsWith("mem:") || rest.startsWith("tcp:") || rest.startsWith("ssl:")) {
        throw new IllegalArgumentException("journal URL " + url
            + ": only H2 file databases are supported (jdbc:h2:PATH or jdbc:h2:file:PATH)");
      }
      if (rest.startsWith("file:")) rest = rest.substring("file:".length());
      if (rest.contains(";")) {
        throw new IllegalArgumentException("journal URL " + url
            + ": H2 options are set by ShardTrain (shardtrain.persistence.h2-auto-server); give only the path");
      }
      m.put("shardtrain.persistence.journal", "h2");
      m.put("shardtrain.persistence.h2-path", JournalSettings.h2Path(rest).toString());
    } else {
      int colon = url.indexOf(':', url.startsWith("jdbc:") ? 5 : 0);
      String scheme = colon < 0 ? url : url.substring(0, colon);
      throw new IllegalArgumentException("unsupported journal URL " + url + " (" + scheme
          + "): expected jdbc:h2:PATH or jdbc:postgresql://HOST:PORT/DB");
    }
    return ConfigFactory.parseMap(m, "--journal " + url);
  }

  static Config fragment() {
    Config f = ConfigFactory.parseResources(JournalConfig.class.getClassLoader(), FRAGMENT);
    if (f.isEmpty()) throw new IllegalStateException(FRAGMENT + " (shardtrain-cluster-config) is not on the classpath");
    return f;
  }
}
