package io.shardtrain.persistence.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointFilesTest {
  @TempDir
  Path tmp;

  static Checkpoint sample() {
    ModelSnapshot model = ModelFilesTest.sample();
    float[] slot = ModelFilesTest.awkwardValues();
    float[] m = new float[14];
    for (int i = 0; i < m.length; i++) m[i] = -i * 0.5f;
    return new Checkpoint(model,
        List.of(new Checkpoint.Slots("dense1.weight", 17, 544, List.of(slot, m)),
            new Checkpoint.Slots("dense1.bias", 17, 544, List.of(new float[] {1f, 2f}, new float[] {3f, 4f}))),
        List.of(new Checkpoint.ReaderOffset(0, 0, 1280), new Checkpoint.ReaderOffset(0, 1, 1248)), 0);
  }

  /** {@link #sample()} saved, with {@code from} replaced by {@code to} in its {@code checkpoint.json}. */
  private Path sampleWith(String from, String to) throws java.io.IOException {
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    Path file = dir.resolve(CheckpointFiles.FILE);
    Files.writeString(file, Files.readString(file).replace(from, to));
    return dir;
  }

  @Test
  void savedCheckpointLoadsBackBitForBitWithSlotsAndReaderOffsets() throws Exception {
    Checkpoint c = sample();
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, c, ModelFiles.IfExists.FAIL);
    assertTrue(CheckpointFiles.isCheckpoint(dir));
    assertTrue(Files.isRegularFile(dir.resolve("dense1.weight.slot1.f32")));
    Checkpoint back = CheckpointFiles.load(dir);
    assertEquals(c.model(), back.model());
    assertEquals(1234567890123L, back.step());
    assertEquals(2, back.slots().size());
    assertEquals(17, back.slotsOf("dense1.weight").updates());
    assertEquals(544, back.slotsOf("dense1.weight").examples());
    for (int k = 0; k < 2; k++) {
      // Compare bit patterns: NaN payloads and -0 must survive.
      float[] a = c.slotsOf("dense1.weight").values().get(k), b = back.slotsOf("dense1.weight").values().get(k);
      for (int i = 0; i < a.length; i++) assertEquals(Float.floatToRawIntBits(a[i]), Float.floatToRawIntBits(b[i]));
    }
    assertArrayEquals(new float[] {3f, 4f}, back.slotsOf("dense1.bias").values().get(1));
    assertEquals(c.readerOffsets(), back.readerOffsets());
  }

  @Test
  void aCheckpointWithoutExamplesPerParameterLoadsWithExamplesUnknown() throws Exception {
    Checkpoint back = CheckpointFiles.load(sampleWith(", \"examples\": 544", ""));
    assertEquals(-1, back.slotsOf("dense1.bias").examples());
    assertEquals(17, back.slotsOf("dense1.bias").updates());
  }

  @Test
  void aCheckpointIsAlsoALoadableModel() throws Exception {
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    assertEquals(ModelFilesTest.sample(), ModelFiles.load(dir));
  }

  @Test
  void aCorruptSlotFileIsRefusedNamingIt() throws Exception {
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    Path slot = dir.resolve("dense1.bias.slot0.f32");
    byte[] bytes = Files.readAllBytes(slot);
    bytes[0] ^= 1;
    Files.write(slot, bytes);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertTrue(e.getMessage().contains("dense1.bias.slot0.f32") && e.getMessage().contains("SHA-256"), e.getMessage());
  }

  @Test
  void aPlainModelIsNotACheckpoint() throws Exception {
    Path dir = tmp.resolve("model");
    ModelFiles.save(dir, ModelFilesTest.sample());
    assertFalse(CheckpointFiles.isCheckpoint(dir));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertTrue(e.getMessage().contains("no checkpoint.json"), e.getMessage());
  }

  @Test
  void slotsOfTheWrongLengthAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Checkpoint(ModelFilesTest.sample(),
        List.of(new Checkpoint.Slots("dense1.bias", 1, -1, List.of(new float[3]))), List.of(), 0));
  }

  @Test
  void checkpointDescriptionThatIsNotUtf8IsRefusedNamingIt() throws Exception {
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    Files.write(dir.resolve(CheckpointFiles.FILE), new byte[] {'{', (byte) 0xff, '}'});
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertEquals(dir.resolve(CheckpointFiles.FILE) + " is not UTF-8 text", e.getMessage());
  }

  @Test
  void epochCountBeyondAnIntIsRefusedNotTruncated() throws Exception {
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    Path file = dir.resolve(CheckpointFiles.FILE);
    String json = Files.readString(file);
    Files.writeString(file, json.replaceFirst("\"epochsDone\": \\d+", "\"epochsDone\": 4294967298"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertEquals(file + ": epochsDone must be a 32-bit integer, got 4294967298", e.getMessage());
  }

  @Test
  void slotsOfAParameterTheModelLacksAreRefusedNamingTheCheckpointFile() throws Exception {
    Path dir = sampleWith("\"parameter\": \"dense1.bias\"", "\"parameter\": \"dense9.bias\"");
    Path file = dir.resolve(CheckpointFiles.FILE);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertTrue(e.getMessage().startsWith(file + ": slots of dense9.bias, which the model lacks; it has ["), e.getMessage());
  }

  @Test
  void aNegativeReaderOffsetIsRefusedNamingTheCheckpointFile() throws Exception {
    // ReaderOffset checks itself, and its message knows no file.
    Path dir = tmp.resolve("ckpt");
    CheckpointFiles.save(dir, sample(), ModelFiles.IfExists.FAIL);
    Path file = dir.resolve(CheckpointFiles.FILE);
    Files.writeString(file, Files.readString(file).replaceFirst("\"offset\": \\d+", "\"offset\": -18"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CheckpointFiles.load(dir));
    assertTrue(e.getMessage().startsWith(file + ": reader offset needs epoch, task and offset >= 0, got "), e.getMessage());
  }
}
