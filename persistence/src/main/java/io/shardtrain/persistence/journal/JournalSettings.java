package io.shardtrain.persistence.journal;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Where events and snapshots are stored, read once from {@code shardtrain.persistence.*}: an
 * append-only log of files in one directory (the one-JVM default, {@link EventLog}), an embedded H2
 * file, a PostgreSQL database that every {@code ps} node reaches, or memory. {@link JournalConfig}
 * turns these settings into the Akka persistence configuration.
 */
public record JournalSettings(
    Kind kind,
    Path h2Path,
    boolean h2AutoServer,
    Duration h2Retention,
    Duration h2WriteDelay,
    boolean h2CodeAtC1,
    Path logDir,
    long logSegmentBytes,
    boolean logFsync,
    String postgresUrl,
    String postgresUser,
    String postgresPassword,
    Duration schemaTimeout) {

  /** The storage behind the journal and snapshot store. */
  public enum Kind {
    LOG, H2, POSTGRES, MEMORY;

    /** The value of {@code shardtrain.persistence.journal} for this kind. */
    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Kind parse(String value) {
      for (Kind k : values()) {
        if (k.configName().equals(value.trim().toLowerCase(Locale.ROOT))) return k;
      }
      throw new IllegalArgumentException("shardtrain.persistence.journal must be log, h2, postgres or memory, got '"
          + value + "'");
    }
  }

  public JournalSettings {
    if (kind == null) throw new IllegalArgumentException("journal kind is missing");
    if (h2Path == null || !h2Path.isAbsolute()) {
      throw new IllegalArgumentException("shardtrain.persistence.h2-path must be an absolute path, got " + h2Path);
    }
    if (logDir == null || !logDir.isAbsolute()) {
      throw new IllegalArgumentException("shardtrain.persistence.log-dir must be an absolute path, got " + logDir);
    }
    if (logSegmentBytes < 4096 || logSegmentBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("shardtrain.persistence.log-segment-size must be between 4 KiB and 2 GiB, got "
          + logSegmentBytes + " bytes");
    }
    requireH2Millis("h2-retention", h2Retention);
    requireH2Millis("h2-write-delay", h2WriteDelay);
    if (postgresUrl == null || !postgresUrl.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("shardtrain.persistence.postgres-url must start with jdbc:postgresql:, got '"
          + postgresUrl + "'");
    }
    if (schemaTimeout == null || schemaTimeout.isNegative() || schemaTimeout.isZero()) {
      throw new IllegalArgumentException("shardtrain.persistence.schema-timeout must be positive, got " + schemaTimeout);
    }
  }

  /** An H2 URL option in whole milliseconds: from 0 to {@code Integer.MAX_VALUE}. */
  private static void requireH2Millis(String key, Duration value) {
    if (value == null || value.isNegative() || value.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("shardtrain.persistence." + key + " must be between 0 and "
          + Integer.MAX_VALUE + " ms, got " + value);
    }
  }

  /** Reads {@code shardtrain.persistence.*} from a resolved configuration. */
  public static JournalSettings fromConfig(Config config) {
    try {
      Config c = config.getConfig("shardtrain.persistence");
      return new JournalSettings(
          Kind.parse(c.getString("journal")),
          h2Path(c.getString("h2-path")),
          c.getBoolean("h2-auto-server"),
          c.getDuration("h2-retention"),
          c.getDuration("h2-write-delay"),
          c.getBoolean("h2-code-at-c1"),
          path("log-dir", c.getString("log-dir")),
          c.getBytes("log-segment-size"),
          c.getBoolean("log-fsync"),
          c.getString("postgres-url"),
          c.getString("postgres-user"),
          c.getString("postgres-password"),
          c.getDuration("schema-timeout"));
    } catch (ConfigException e) {
      throw new IllegalArgumentException("shardtrain.persistence: " + e.getMessage(), e);
    }
  }

  /** The settings of a running system. */
  public static JournalSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  /** The H2 URL for {@link #h2Path()}, or the PostgreSQL URL, or "log:" and the log's directory, or "memory". */
  public String jdbcUrl() {
    return switch (kind) {
      case LOG -> "log:" + logDir;
      case H2 -> h2Url(h2Path, h2AutoServer, h2Retention, h2WriteDelay);
      case POSTGRES -> postgresUrl;
      case MEMORY -> "memory";
    };
  }

  /**
   * No {@code DB_CLOSE_DELAY=-1}: H2 then closes the file when the pool closes (on ActorSystem
   * termination), which flushes it, releases the file lock for the next system or process, and
   * lets H2 compact on close. With {@code -1} the database would stay open, locked, until JVM exit.
   * {@code DB_CLOSE_ON_EXIT=FALSE}: H2's own JVM shutdown hook would close the file while Akka's
   * coordinated shutdown (another hook, run at the same time on SIGTERM) still journals the blocks'
   * hand-off and the master's last events, which then fail ("Database is already closed"); the
   * pool's close at the end of that shutdown closes it instead. H2 refuses it with its
   * auto-server, whose process must close the file at exit: there {@code shardtrain node} runs
   * Akka's shutdown before the JVM's hooks on SIGTERM.
   *
   * <p>{@code AUTO_SERVER=TRUE} lets other JVMs on this machine open the same file (checked here with
   * three JVMs, H2 2.2.224): the first process serves it over TCP on a random port bound to all
   * interfaces (port and a random key in the .lock.db file, which clients must present), the others
   * connect as clients, and a later process serves it once the first has exited. Without it a
   * second JVM fails with "Database may be already in use". Several machines need PostgreSQL.
   *
   * <p>{@code RETENTION_TIME}: H2 reuses the space of deleted rows only after this long (its
   * default is 45 s). Blocks delete their journaled steps behind each snapshot, but at 45 s the
   * file kept growing by every step written in the last 45 s (5.9 GB in a 3000-step run);
   * at {@code shardtrain.persistence.h2-retention} (250 ms) it stays bounded (docs/BENCHMARKS.md).
   *
   * <p>{@code WRITE_DELAY}: H2 writes what was committed to the file in one chunk this often (its
   * default is 500 ms), the longest a commit waits in memory. A chunk's space is reused only once
   * every page in it is dead; at 500 ms a chunk held about 60 MB of a fast sync run's journal and
   * the file reached 264-627 MB (1.2 GB async), at {@code shardtrain.persistence.h2-write-delay}
   * (100 ms) 115-160 MB, as fast (docs/BENCHMARKS.md).
   */
  static String h2Url(Path path, boolean autoServer, Duration retention, Duration writeDelay) {
    return "jdbc:h2:file:" + path + ";RETENTION_TIME=" + retention.toMillis() + ";WRITE_DELAY=" + writeDelay.toMillis()
        + (autoServer ? ";AUTO_SERVER=TRUE" : ";DB_CLOSE_ON_EXIT=FALSE");
  }

  static Path h2Path(String value) {
    return path("h2-path", value);
  }

  /** An absolute, normalized path from {@code shardtrain.persistence.<key>}; "~" is the user's home. */
  static Path path(String key, String value) {
    String v = value.trim();
    if (v.isEmpty()) throw new IllegalArgumentException("shardtrain.persistence." + key + " is empty");
    if (v.equals("~") || v.startsWith("~/")) v = System.getProperty("user.home") + v.substring(1);
    // H2 2.x refuses paths implicitly relative to the working directory: make them explicit here.
    return Path.of(v).toAbsolutePath().normalize();
  }

  @Override
  public String toString() {
    return "JournalSettings[" + kind.configName() + " " + jdbcUrl()
        + (kind == Kind.POSTGRES ? " user " + postgresUser : "") + ", schema-timeout " + schemaTimeout + "]";
  }
}
