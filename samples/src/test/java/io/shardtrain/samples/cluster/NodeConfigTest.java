package io.shardtrain.samples.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.persistence.journal.JournalSettings;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A node's configuration: where its journal goes by default. */
class NodeConfigTest {
  @Test
  void aDataDirGivenToTheNodeMovesTheDefaultJournalWithIt() {
    JournalSettings s = JournalSettings.fromConfig(NodeConfig.build(List.of("ps"), "127.0.0.1", 25650, List.of(),
        null, null, Map.of("shardtrain.data-dir", "/srv/node-a")));
    assertEquals(JournalSettings.Kind.LOG, s.kind());
    assertEquals(Path.of("/srv/node-a/journal/log"), s.logDir());
    assertEquals(Path.of("/srv/node-a/journal/shardtrain"), s.h2Path());
  }

  @Test
  void aNodeWithoutSeedsIsItsOwnSeedAndOnAFreePortHasNoneToName() {
    assertEquals(List.of("akka://shardtrain@127.0.0.1:25650"), NodeConfig.build(List.of("ps"), "127.0.0.1", 25650,
        List.of(), "memory", null, Map.of()).getStringList("akka.cluster.seed-nodes"));
    assertEquals(List.of(), NodeConfig.build(List.of("ps"), "127.0.0.1", 0, List.of(), "memory", null, Map.of())
        .getStringList("akka.cluster.seed-nodes"));
  }

  @Test
  void aSeedWithoutAPortIsRefusedNamingWhatItIs() {
    var e = assertThrows(IllegalArgumentException.class, () -> NodeConfig.build(List.of("ps"), "127.0.0.1", 25650,
        List.of("localhost"), "memory", null, Map.of()));
    assertEquals("seed node 'localhost': expected HOST:PORT", e.getMessage());
  }
}
