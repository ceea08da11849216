package io.shardtrain.persistence.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sparse tables in a saved model: their two files, the manifest's entry, and what a reader refuses. */
class ModelTablesTest {
  @TempDir
  Path tmp;

  static ModelSnapshot factorizationMachine() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("model", "fm");
    d.put("rowInit", "normal");
    return new ModelSnapshot(d, 77, List.of(new ParameterValues("fm.dense", new int[] {4}, new float[] {1f, -2f, 0.5f, 0f})),
        List.of(new TableValues("fm.rows", 3, new long[] {-5, 2, 1L << 40},
            new float[] {0.1f, 0.2f, 0.3f, -0f, Float.NaN, 7f, 1e-40f, -1f, 3.25f})));
  }

  @Test
  void aTableRoundTripsBitForBitBesideTheDenseParameters() throws IOException {
    Path dir = tmp.resolve("fm");
    ModelSnapshot saved = factorizationMachine();
    ModelFiles.save(dir, saved);
    ModelSnapshot loaded = ModelFiles.load(dir);
    assertEquals(saved, loaded);
    TableValues t = loaded.table("fm.rows");
    assertEquals(3, t.rows());
    assertEquals(1, t.find(2));
    assertEquals(-1, t.find(3));
    assertEquals(List.of("fm.dense"), loaded.names());
  }

  @Test
  void theIdsAreLittleEndianInt64AndTheRowsFloat32RowAfterRow() throws IOException {
    Path dir = tmp.resolve("fm");
    ModelFiles.save(dir, factorizationMachine());
    ByteBuffer ids = ByteBuffer.wrap(Files.readAllBytes(dir.resolve("fm.rows.ids.i64"))).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(24, ids.capacity());
    assertEquals(-5, ids.getLong(0));
    assertEquals(1L << 40, ids.getLong(16));
    ByteBuffer values = ByteBuffer.wrap(Files.readAllBytes(dir.resolve("fm.rows.f32"))).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(36, values.capacity());
    assertEquals(3.25f, values.getFloat(32));
    String manifest = Files.readString(dir.resolve("manifest.json"));
    assertTrue(manifest.contains("\"tables\": [\n    {\"name\": \"fm.rows\", \"dim\": 3, \"rows\": 3, \"ids\": {\"file\":"
        + " \"fm.rows.ids.i64\", \"dtype\": \"int64\", \"bytes\": 24, \"sha256\": \""), manifest);
  }

  @Test
  void aModelWithoutTablesHasNoTablesField() throws IOException {
    Path dir = tmp.resolve("mlp");
    ModelFiles.save(dir, ModelFilesTest.sample());
    assertFalse(Files.readString(dir.resolve("manifest.json")).contains("tables"));
    assertEquals(List.of(), ModelFiles.load(dir).tables());
  }

  @Test
  void aChangedTableFileIsNamedWithItsHash() throws IOException {
    Path dir = tmp.resolve("fm");
    ModelFiles.save(dir, factorizationMachine());
    byte[] ids = Files.readAllBytes(dir.resolve("fm.rows.ids.i64"));
    ids[0] ^= 1;
    Files.write(dir.resolve("fm.rows.ids.i64"), ids);
    var e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().contains("table file fm.rows.ids.i64 has SHA-256 "), e.getMessage());
    ids[0] ^= 1;
    Files.write(dir.resolve("fm.rows.ids.i64"), ids);
    Files.delete(dir.resolve("fm.rows.f32"));
    e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().contains("table file fm.rows.f32 (for fm.rows) listed in manifest.json is missing"),
        e.getMessage());
  }

  @Test
  void aManifestWhoseRowsDisagreeWithTheFilesIsRefusedNamingTheField() throws IOException {
    Path dir = tmp.resolve("fm");
    ModelFiles.save(dir, factorizationMachine());
    Path manifest = dir.resolve("manifest.json");
    String json = Files.readString(manifest, StandardCharsets.UTF_8);
    Files.writeString(manifest, json.replace("\"rows\": 3", "\"rows\": 4"));
    var e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().contains("tables[0].ids.bytes is 24 but the table's rows need 32"), e.getMessage());
  }

  @Test
  void idsOutOfOrderOrTwiceAreRefused() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> new TableValues("t", 1, new long[] {3, 3}, new float[2]));
    assertEquals("table t: ids must ascend strictly; id 3 at row 1 follows 3", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new TableValues("t", 2, new long[] {1}, new float[3]));
    assertEquals("table t of 1 rows of 2 values needs 2 values, got 3", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new ModelSnapshot(Map.of(), 0,
        List.of(new ParameterValues("x", new int[] {1}, new float[1])), List.of(new TableValues("x", 1, new long[0], new float[0]))));
    assertEquals("model snapshot has the name x twice", e.getMessage());
  }

  @Test
  void numpyLoadsAnExportedTableAsRowsAndIds() throws Exception {
    Process probe = new ProcessBuilder("python3", "-c", "import numpy").redirectErrorStream(true).start();
    Assumptions.assumeTrue(probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0, "python3 with numpy is not available");
    Path out = tmp.resolve("npy");
    ModelFiles.exportNpy(factorizationMachine(), out);
    Process p = new ProcessBuilder("python3", "-c", String.join("\n",
        "import sys, numpy as np",
        "ids = np.load(sys.argv[1] + '/fm.rows.ids.npy'); rows = np.load(sys.argv[1] + '/fm.rows.npy')",
        "print(ids.dtype.str, ids.tolist(), rows.dtype.str, rows.shape, rows[2].tolist())"), out.toString())
        .redirectErrorStream(true).start();
    String printed = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals("<i8 [-5, 2, 1099511627776] <f4 (3, 3) [9.99994610111476e-41, -1.0, 3.25]", printed);
  }
}
