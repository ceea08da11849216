package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class JournalConfigTest {
  private static Config over(String hocon) {
    return JournalConfig.of(ConfigFactory.parseString(hocon));
  }

  @Test
  void theDefaultLogAndTheH2PathFollowTheDataDirSetByTheApplication() {
    JournalSettings s = JournalSettings.fromConfig(over("shardtrain.data-dir = \"/srv/st\""));
    assertEquals(JournalSettings.Kind.LOG, s.kind());
    assertEquals(Path.of("/srv/st/journal/log"), s.logDir());
    assertEquals("log:/srv/st/journal/log", s.jdbcUrl());
    assertEquals(32L << 20, s.logSegmentBytes());
    assertFalse(s.logFsync());
    Config log = over("shardtrain.data-dir = \"/srv/st\"");
    assertEquals(JournalConfig.LOG_JOURNAL, log.getString("akka.persistence.journal.plugin"));
    assertEquals("/srv/st/journal/log/snapshots", log.getString("akka.persistence.snapshot-store.local.dir"));
    assertEquals(Path.of("/srv/st/journal/shardtrain"), s.h2Path());
    JournalSettings loaded = JournalSettings.fromConfig(
        ConfigFactory.load(ConfigFactory.parseString("shardtrain.data-dir = \"/srv/other\"")));
    assertEquals(Path.of("/srv/other/journal/shardtrain"), loaded.h2Path());
    assertEquals(Duration.ofSeconds(30), loaded.schemaTimeout());
  }

  @Test
  void h2RetentionAndWriteDelayGoIntoTheUrlAndNegativeOnesAreRefusedNamingTheKey() {
    assertEquals("jdbc:h2:file:/d/j;RETENTION_TIME=2000;WRITE_DELAY=40;DB_CLOSE_ON_EXIT=FALSE", JournalSettings.fromConfig(over(
        "shardtrain.persistence { journal = h2, h2-path = \"/d/j\", h2-retention = 2s, h2-write-delay = 40ms }"))
        .jdbcUrl());
    for (String key : new String[] {"h2-retention", "h2-write-delay"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> JournalSettings.fromConfig(over("shardtrain.persistence." + key + " = -1s")));
      assertTrue(e.getMessage().contains("shardtrain.persistence." + key), e.getMessage());
    }
  }

  @Test
  void h2LayerUsesTheSharedJdbcPoolWithH2ProfileAndUrl() {
    Config c = over("shardtrain.persistence { journal = h2, h2-path = \"/data/j\", h2-auto-server = true }");
    assertEquals("jdbc-journal", c.getString("akka.persistence.journal.plugin"));
    assertEquals("jdbc-snapshot-store", c.getString("akka.persistence.snapshot-store.plugin"));
    assertEquals("shardtrain", c.getString("jdbc-journal.use-shared-db"));
    assertEquals("shardtrain", c.getString("jdbc-snapshot-store.use-shared-db"));
    assertEquals("slick.jdbc.H2Profile$", c.getString("akka-persistence-jdbc.shared-databases.shardtrain.profile"));
    assertEquals("jdbc:h2:file:/data/j;RETENTION_TIME=250;WRITE_DELAY=100;AUTO_SERVER=TRUE",
        c.getString("akka-persistence-jdbc.shared-databases.shardtrain.db.url"));
    // From persistence.conf over the jdbc plugin's example shared database.
    assertEquals(8, c.getInt("akka-persistence-jdbc.shared-databases.shardtrain.db.numThreads"));
    assertEquals("HikariCP", c.getString("akka-persistence-jdbc.shared-databases.shardtrain.db.connectionPool"));
  }

  @Test
  void postgresLayerCarriesUrlAndCredentials() {
    Config c = over("shardtrain.persistence { journal = postgres, postgres-url = \"jdbc:postgresql://db:5432/st\","
        + " postgres-user = u, postgres-password = p }");
    assertEquals("slick.jdbc.PostgresProfile$",
        c.getString("akka-persistence-jdbc.shared-databases.shardtrain.profile"));
    assertEquals("jdbc:postgresql://db:5432/st", c.getString("akka-persistence-jdbc.shared-databases.shardtrain.db.url"));
    assertEquals("u", c.getString("akka-persistence-jdbc.shared-databases.shardtrain.db.user"));
    assertEquals("p", c.getString("akka-persistence-jdbc.shared-databases.shardtrain.db.password"));
    assertFalse(JournalSettings.fromConfig(c).toString().contains("p,"), "password must not be printed");
  }

  @Test
  void memoryLayerUsesTheInMemoryJournalAndSnapshotStore() {
    Config c = over("shardtrain.persistence.journal = memory");
    assertEquals("shardtrain-memory-journal", c.getString("akka.persistence.journal.plugin"));
    assertEquals("shardtrain-memory-snapshot-store", c.getString("akka.persistence.snapshot-store.plugin"));
    assertEquals(MemoryJournal.class.getName(), c.getString("shardtrain-memory-journal.class"));
    assertEquals(MemorySnapshotStore.class.getName(), c.getString("shardtrain-memory-snapshot-store.class"));
  }

  @Test
  void forUrlInfersH2AndPostgresFromTheUrl() {
    JournalSettings h2 = JournalSettings.fromConfig(JournalConfig.of(JournalConfig.forUrl("jdbc:h2:file:/var/st/j")));
    assertEquals(JournalSettings.Kind.H2, h2.kind());
    assertEquals(Path.of("/var/st/j"), h2.h2Path());
    assertEquals(Path.of("/var/st/k"),
        JournalSettings.fromConfig(JournalConfig.of(JournalConfig.forUrl("jdbc:h2:/var/st/k"))).h2Path());
    JournalSettings pg = JournalSettings.fromConfig(
        JournalConfig.of(JournalConfig.forUrl("jdbc:postgresql://10.0.0.5:5432/st")));
    assertEquals(JournalSettings.Kind.POSTGRES, pg.kind());
    assertEquals("jdbc:postgresql://10.0.0.5:5432/st", pg.jdbcUrl());
  }

  @Test
  void forUrlRejectsOtherDatabasesNamingTheUrl() {
    var e = assertThrows(IllegalArgumentException.class, () -> JournalConfig.forUrl("jdbc:mysql://db:3306/st"));
    assertTrue(e.getMessage().contains("jdbc:mysql://db:3306/st"), e.getMessage());
    assertTrue(e.getMessage().contains("(jdbc:mysql)"), e.getMessage());
    var mem = assertThrows(IllegalArgumentException.class, () -> JournalConfig.forUrl("jdbc:h2:mem:x"));
    assertTrue(mem.getMessage().contains("jdbc:h2:mem:x"), mem.getMessage());
    assertThrows(IllegalArgumentException.class, () -> JournalConfig.forUrl("jdbc:h2:/x;AUTO_SERVER=TRUE"));
  }

  @Test
  void aLogSegmentSizeOutsideItsRangeIsRefusedNamingTheKey() {
    for (String size : new String[] {"100", "3GiB"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> JournalSettings.fromConfig(over("shardtrain.persistence.log-segment-size = " + size)));
      assertTrue(e.getMessage().contains("shardtrain.persistence.log-segment-size"), e.getMessage());
    }
  }

  @Test
  void unknownJournalKindIsRejectedNamingTheKey() {
    var e = assertThrows(IllegalArgumentException.class, () -> over("shardtrain.persistence.journal = cassandra"));
    assertTrue(e.getMessage().contains("shardtrain.persistence.journal"), e.getMessage());
    assertTrue(e.getMessage().contains("cassandra"), e.getMessage());
  }

  @Test
  void oneLineCauseTakesTheRootCauseFirstLineAndMasksUrlPasswords() {
    var root = new java.sql.SQLException("Connection refused\n\tat somewhere");
    assertEquals("journal x unusable: SQLException: Connection refused",
        Journal.oneLine("journal x unusable", new RuntimeException("wrapper", root)));
    assertEquals("jdbc:postgresql://h/db?user=a&password=***&ssl=true",
        Journal.mask("jdbc:postgresql://h/db?user=a&password=secret&ssl=true"));
  }
}
