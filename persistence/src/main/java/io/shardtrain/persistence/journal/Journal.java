package io.shardtrain.persistence.journal;

import akka.actor.typed.ActorSystem;
import akka.persistence.jdbc.db.SlickDatabase;
import akka.persistence.jdbc.db.SlickExtension;
import akka.persistence.jdbc.db.SlickExtensionImpl;
import akka.persistence.jdbc.testkit.javadsl.SchemaUtils;
import com.typesafe.config.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Prepares the journal of a running ActorSystem configured by {@link JournalConfig}: checks that
 * the database is reachable, creates the journal and snapshot tables if absent, and closes the
 * shared connection pool when the system terminates. Call {@link #start} once per system, before
 * the first persistent actor.
 */
public final class Journal {
  private Journal() {}

  /** How long to wait before connecting again to an H2 file another JVM is opening. */
  private static final Duration OPENING_RETRY = Duration.ofMillis(500);

  /**
   * Creates the tables if absent (idempotent), waiting at most {@code shardtrain.persistence.schema-timeout}.
   * The log journal is opened here and kept open until the system terminates, so that a directory
   * another process holds, or a corrupt segment, fails the start rather than the first entity.
   * Does nothing for the in-memory journal.
   *
   * @throws IllegalStateException with a one-line message naming the journal URL and the cause when
   *     the database cannot be reached or the tables cannot be created, or the log cannot be opened
   */
  public static void start(ActorSystem<?> system) {
    Config config = system.settings().config();
    if (JournalConfig.LOG_JOURNAL.equals(config.getString("akka.persistence.journal.plugin"))) {
      JournalSettings settings = JournalSettings.fromConfig(config);
      openLog(settings);
      system.getWhenTerminated().thenRun(() -> LogJournal.release(settings.logDir()));
      return;
    }
    if (!"jdbc-journal".equals(config.getString("akka.persistence.journal.plugin"))) return;
    Duration timeout = config.getDuration("shardtrain.persistence.schema-timeout");
    Config db = config.getConfig(JournalConfig.SHARED_DB_PATH + ".db");
    String url = db.getString("url");
    String user = db.hasPath("user") ? db.getString("user") : null;
    String password = db.hasPath("password") ? db.getString("password") : null;
    keepH2AutoServerOnLoopback(url).ifPresent(problem -> system.log().warn(problem));
    JournalSettings settings = JournalSettings.fromConfig(config);
    if (settings.kind() == JournalSettings.Kind.H2 && settings.h2CodeAtC1()) {
      JournalCompilation.keepAtC1().ifPresent(problem -> system.log().info(problem));
    }
    if (settings.kind() == JournalSettings.Kind.H2) createH2Directory(settings.h2Path(), url);
    // A plain connection first: it fails fast with the driver's own reason and bounds the wait,
    // where the pool would retry for its whole connectionTimeout. It stays open until the pool is:
    // the last connection's close shuts an H2 file and its auto-server, and the other JVMs opening
    // the file meanwhile would fail ("Lock file recently modified", or an EOF from the server).
    CompletableFuture<Connection> probe = CompletableFuture.supplyAsync(() -> probe(url, user, password, timeout),
        daemonExecutor());
    Connection held = await(url, timeout, probe);
    try (held) {
      // The plugins do not close a shared pool when they stop: close it once the system is gone, which
      // also lets H2 flush, compact and unlock its file.
      SlickDatabase shared = ((SlickExtensionImpl) SlickExtension.get(system.classicSystem()))
          .database(config.getConfig("jdbc-journal"));
      system.getWhenTerminated().thenRun(() -> shared.database().close());
      await(url, timeout, SchemaUtils.createIfNotExists(system).toCompletableFuture());
    } catch (SQLException e) {
      throw new IllegalStateException(oneLine("journal " + mask(url) + " unusable", e), e);
    }
  }

  /**
   * Opens the log journal that {@code config} (resolved) selects before its ActorSystem exists, so
   * that a directory another process holds, or a corrupt segment, fails in one line with nothing
   * started. The returned handle lets go of it, once however often it runs: run it when {@link #start}
   * has opened the log for the system (which keeps its own), or when the system could not be made.
   * Nothing for the other journals.
   *
   * @throws IllegalStateException naming the directory and the problem
   */
  public static Runnable openLogBeforeStart(Config config) {
    if (!JournalConfig.LOG_JOURNAL.equals(config.getString("akka.persistence.journal.plugin"))) return () -> { };
    JournalSettings settings = JournalSettings.fromConfig(config);
    openLog(settings);
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) LogJournal.release(settings.logDir());
    };
  }

  private static void openLog(JournalSettings settings) {
    try {
      LogJournal.acquire(settings.logDir(), settings.logSegmentBytes(), settings.logFsync());
    } catch (UncheckedIOException e) {
      throw new IllegalStateException(oneLine("journal " + settings.jdbcUrl() + " unusable", e), e);
    }
  }

  /**
   * Before H2 first loads in this JVM: its auto-server (AUTO_SERVER=TRUE, for the other JVMs of this
   * machine) binds every interface unless the system property {@code h2.bindAddress} names one, so
   * set it to loopback unless it is set already. H2 reads it once, when it loads; a problem found
   * afterwards (H2 loaded earlier, without it) comes back as a line to warn with.
   */
  public static java.util.Optional<String> keepH2AutoServerOnLoopback(String url) {
    if (!url.startsWith("jdbc:h2:") || !url.toUpperCase(java.util.Locale.ROOT).contains("AUTO_SERVER=TRUE")) {
      return java.util.Optional.empty();
    }
    if (System.getProperty("h2.bindAddress") == null) System.setProperty("h2.bindAddress", "127.0.0.1");
    String bound = org.h2.engine.SysProperties.BIND_ADDRESS;
    if (bound != null && !bound.isEmpty() && loopback(bound)) return java.util.Optional.empty();
    return java.util.Optional.of("H2's auto-server for " + url + " listens on " + (bound == null || bound.isEmpty()
        ? "every interface (H2 was loaded before h2.bindAddress was set)" : bound + " (-Dh2.bindAddress)")
        + ": whoever reaches that port can open the journal with its credentials");
  }

  private static boolean loopback(String host) {
    try {
      return java.net.InetAddress.getByName(host).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  /**
   * Bytes the journal occupies: the H2 database files, or the PostgreSQL journal, tag and snapshot
   * tables with their indexes ({@code pg_total_relation_size}); 0 for the in-memory journal.
   */
  public static long journalBytes(JournalSettings settings) {
    return switch (settings.kind()) {
      case MEMORY -> 0L;
      case LOG -> treeBytes(settings.logDir());
      case H2 -> h2Bytes(settings.h2Path());
      case POSTGRES -> postgresBytes(settings);
    };
  }

  private static long treeBytes(Path dir) {
    if (!Files.isDirectory(dir)) return 0L;
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> {
        try {
          return Files.size(p);
        } catch (IOException e) {
          return 0L; // removed between listing and sizing (a segment or an old snapshot)
        }
      }).sum();
    } catch (IOException | UncheckedIOException e) {
      return 0L; // a file removed while walking; the size is a report, not a check
    }
  }

  private static long h2Bytes(Path base) {
    Path dir = base.getParent();
    String prefix = base.getFileName() + ".";
    if (dir == null || !Files.isDirectory(dir)) return 0L;
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().startsWith(prefix))
          .filter(Files::isRegularFile)
          .mapToLong(p -> {
            try {
              return Files.size(p);
            } catch (IOException e) {
              return 0L; // deleted between listing and sizing (H2 temp files)
            }
          })
          .sum();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the H2 journal directory " + dir, e);
    }
  }

  private static long postgresBytes(JournalSettings s) {
    String sql = "SELECT coalesce(pg_total_relation_size(to_regclass('event_journal')), 0)"
        + " + coalesce(pg_total_relation_size(to_regclass('event_tag')), 0)"
        + " + coalesce(pg_total_relation_size(to_regclass('snapshot')), 0)";
    try (Connection c = DriverManager.getConnection(s.postgresUrl(), credentials(s.postgresUrl(), s.postgresUser(),
            s.postgresPassword(), s.schemaTimeout()));
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(oneLine("journal " + s.postgresUrl() + " size unavailable", e));
    }
  }

  /**
   * The directory of H2's file, made before H2 opens it: where it cannot be made, H2 would first
   * print the failure of its trace file, a stack trace, to stderr.
   */
  private static void createH2Directory(Path file, String url) {
    Path dir = file.getParent();
    if (dir == null) return;
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new IllegalStateException(oneLine("journal " + mask(url) + " unusable", e), e);
    }
  }

  /** A valid connection to {@code url}, for the caller to close. */
  private static Connection probe(String url, String user, String password, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos() - OPENING_RETRY.toNanos();
    while (true) {
      try {
        Connection c = DriverManager.getConnection(url, credentials(url, user, password, timeout));
        if (c.isValid((int) Math.max(1, timeout.toSeconds()))) return c;
        c.close();
        throw new SQLException("connection is not valid");
      } catch (SQLException e) {
        // Another JVM is opening the same H2 file with its auto-server: H2 refuses while that JVM's
        // lock file is fresh, and serves the file to the others a moment later.
        boolean opening = String.valueOf(e.getMessage()).contains("Lock file recently modified");
        if (!opening || System.nanoTime() > deadline) throw new CompletionFailure(e);
      }
      try {
        Thread.sleep(OPENING_RETRY.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CompletionFailure(new SQLException("interrupted while waiting for the H2 file", e));
      }
    }
  }

  private static Properties credentials(String url, String user, String password, Duration timeout) {
    Properties p = new Properties();
    if (user != null) p.setProperty("user", user);
    if (password != null) p.setProperty("password", password);
    if (url.startsWith("jdbc:postgresql:")) {
      // Seconds for the TCP connect and for the whole login (H2 rejects unknown properties).
      String seconds = Long.toString(Math.max(1, timeout.toSeconds()));
      p.setProperty("connectTimeout", seconds);
      p.setProperty("loginTimeout", seconds);
    }
    return p;
  }

  private static <T> T await(String url, Duration timeout, CompletableFuture<T> f) {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new IllegalStateException("journal " + mask(url) + " unusable: no answer within " + timeout.toMillis()
          + " ms (shardtrain.persistence.schema-timeout)");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionFailure cf ? cf.getCause() : e.getCause();
      throw new IllegalStateException(oneLine("journal " + mask(url) + " unusable", cause), cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("journal " + mask(url) + ": interrupted while creating the tables");
    }
  }

  /** "{@code what}: RootClass: first line of its message", one line. */
  static String oneLine(String what, Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
    String msg = root.getMessage() == null ? "" : root.getMessage().strip();
    int nl = msg.indexOf('\n');
    if (nl >= 0) msg = msg.substring(0, nl).strip();
    return what + ": " + root.getClass().getSimpleName() + (msg.isEmpty() ? "" : ": " + msg);
  }

  /** Hides a password given in the URL's query ({@code password=...}). */
  static String mask(String url) {
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
  }

  private static java.util.concurrent.Executor daemonExecutor() {
    return r -> {
      Thread t = new Thread(r, "shardtrain-journal-probe");
      t.setDaemon(true);
      t.start();
    };
  }

  /** Carries a checked SQLException out of the probe thread. */
  private static final class CompletionFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CompletionFailure(SQLException e) {
      super(e);
    }
  }
}
