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
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelFilesTest {
  @TempDir
  Path tmp;

  /** Values chosen to catch any conversion: NaN payloads, -0, subnormals, extremes. */
  static float[] awkwardValues() {
    int[] bits = {
        0x7fc00000, 0x7fc12345, 0xffc00001, 0x7fffffff, // NaNs: canonical, payload, negative
        0x80000000, 0x00000000, // -0, +0
        0x00000001, 0x807fffff, 0x00400000, // subnormals
        0x7f7fffff, 0xff800000, 0x7f800000, // max, -inf, +inf
        0x3f800000, 0xbeaaaaab, // 1, -1/3
    };
    float[] out = new float[bits.length];
    for (int i = 0; i < bits.length; i++) out[i] = Float.intBitsToFloat(bits[i]);
    return out;
  }

  static ModelSnapshot sample() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("model", "mlp");
    d.put("inputDim", "7");
    d.put("hidden", "2");
    d.put("classes", "3");
    d.put("activation", "relu");
    float[] w = awkwardValues(); // 14 values = 7 x 2
    float[] b = {0.5f, -0.25f};
    float[] w2 = new float[6];
    for (int i = 0; i < w2.length; i++) w2[i] = i * 0.1f - 0.3f;
    return new ModelSnapshot(d, 1234567890123L, List.of(
        new ParameterValues("dense1.weight", new int[] {7, 2}, w),
        new ParameterValues("dense1.bias", new int[] {2}, b),
        new ParameterValues("dense2.weight", new int[] {2, 3}, w2),
        new ParameterValues("dense2.bias", new int[] {3}, new float[] {0f, 1f, -1f})));
  }

  private static int[] bits(float[] v) {
    int[] out = new int[v.length];
    for (int i = 0; i < v.length; i++) out[i] = Float.floatToRawIntBits(v[i]);
    return out;
  }

  @Test
  void roundTripKeepsEveryBitOrderAndDescription() throws IOException {
    Path dir = tmp.resolve("m");
    ModelSnapshot s = sample();
    ModelFiles.save(dir, s);
    ModelSnapshot back = ModelFiles.load(dir);
    assertEquals(s.version(), back.version());
    assertEquals(List.copyOf(s.description().entrySet()), List.copyOf(back.description().entrySet()));
    assertEquals(s.names(), back.names());
    for (int i = 0; i < s.parameters().size(); i++) {
      ParameterValues a = s.parameters().get(i);
      ParameterValues b = back.parameters().get(i);
      assertArrayEquals(a.shape(), b.shape(), a.name());
      assertArrayEquals(bits(a.values()), bits(b.values()), a.name());
    }
    assertEquals(s, back);
  }

  @Test
  void parameterFilesAreRawLittleEndianFloatsAndManifestDescribesThem() throws Exception {
    Path dir = tmp.resolve("m");
    Instant before = Instant.now().minusMillis(1);
    ModelFiles.save(dir, sample());
    Instant after = Instant.now().plusMillis(1);

    byte[] raw = Files.readAllBytes(dir.resolve("dense1.weight.f32"));
    assertEquals(56, raw.length);
    ByteBuffer le = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(0x7fc12345, le.getInt(4));
    assertEquals((byte) 0x45, raw[4]); // least significant byte first
    assertEquals(0x80000000, le.getInt(16));

    ModelManifest m = ModelFiles.readManifest(dir);
    assertEquals(1, m.formatVersion());
    assertEquals(1234567890123L, m.version());
    assertTrue(!m.createdAt().isBefore(before) && !m.createdAt().isAfter(after), m.createdAt()
        + " not in [" + before + ", " + after + "]");
    assertEquals("relu", m.description().get("activation"));
    assertEquals(4, m.parameters().size());
    ModelManifest.Entry e = m.parameters().get(0);
    assertEquals("dense1.weight", e.name());
    assertArrayEquals(new int[] {7, 2}, e.shape());
    assertEquals("dense1.weight.f32", e.file());
    assertEquals(56, e.bytes());
    assertEquals(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw)),
        e.sha256());
    assertEquals("dense1.bias.f32", m.parameters().get(1).file());
    assertEquals(8, m.parameters().get(1).bytes());

    String json = Files.readString(dir.resolve("manifest.json"));
    assertTrue(json.contains("\"format\": \"shardtrain-model\""), json);
    assertTrue(json.contains("\"formatVersion\": 1"), json);
    assertTrue(json.contains("{\"name\": \"dense1.bias\", \"shape\": [2], \"dtype\": \"float32\", "
        + "\"byteOrder\": \"little\", \"file\": \"dense1.bias.f32\", \"bytes\": 8, \"sha256\": \""),
        json);
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(5, files.count());
    }
    try (Stream<Path> siblings = Files.list(tmp)) {
      assertEquals(List.of(dir), siblings.toList(), "no temporary directory is left behind");
    }
  }

  @Test
  void unsafeNamesAreEscapedAndDecodedBack() throws IOException {
    Path dir = tmp.resolve("m");
    ModelSnapshot s = new ModelSnapshot(Map.of("k", "line\n\"quoted\" \\ é"), 0, List.of(
        new ParameterValues("enc/attn weight", new int[] {1}, new float[] {1f}),
        new ParameterValues(".hidden%x", new int[] {1}, new float[] {2f}),
        new ParameterValues("ü", new int[] {1}, new float[] {3f})));
    ModelFiles.save(dir, s);
    assertTrue(Files.exists(dir.resolve("enc%2Fattn%20weight.f32")));
    assertTrue(Files.exists(dir.resolve("%2Ehidden%25x.f32")));
    assertTrue(Files.exists(dir.resolve("%C3%BC.f32")));
    assertEquals(s, ModelFiles.load(dir));
  }

  @Test
  void namesDifferingOnlyInCaseAreRefused() {
    ModelSnapshot s = new ModelSnapshot(Map.of(), 0, List.of(
        new ParameterValues("W", new int[] {1}, new float[] {1f}),
        new ParameterValues("w", new int[] {1}, new float[] {2f})));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelFiles.save(tmp.resolve("m"), s));
    assertTrue(e.getMessage().contains("W and w differ only in letter case"), e.getMessage());
  }

  @Test
  void saveRefusesANonEmptyDirectoryUnlessToldToReplace() throws IOException {
    Path dir = tmp.resolve("m");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("keep.txt"), "x");
    FileAlreadyExistsException e = assertThrows(FileAlreadyExistsException.class,
        () -> ModelFiles.save(dir, sample()));
    assertTrue(e.getMessage().contains("refusing to overwrite"), e.getMessage());
    assertTrue(Files.exists(dir.resolve("keep.txt")));

    ModelFiles.save(dir, sample(), ModelFiles.IfExists.REPLACE);
    assertFalse(Files.exists(dir.resolve("keep.txt")));
    assertEquals(sample(), ModelFiles.load(dir));
    try (Stream<Path> siblings = Files.list(tmp)) {
      assertEquals(List.of(dir), siblings.toList(), "old and temporary directories are removed");
    }
  }

  @Test
  void saveTakesOverAnEmptyDirectory() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("empty"));
    ModelFiles.save(dir, sample());
    assertEquals(sample(), ModelFiles.load(dir));
  }

  @Test
  void aSavedModelHasThePermissionsOfAnyNewDirectoryAndFile() throws IOException {
    org.junit.jupiter.api.Assumptions.assumeTrue(tmp.getFileSystem().supportedFileAttributeViews().contains("posix"));
    Path dir = tmp.resolve("m");
    ModelFiles.save(dir, sample());
    // What the umask gives a new directory and file here (not the 0700 and 0600 of a temp directory).
    Path plainDir = Files.createDirectory(tmp.resolve("plain"));
    Path plainFile = Files.createFile(plainDir.resolve("f"));
    assertEquals(Files.getPosixFilePermissions(plainDir), Files.getPosixFilePermissions(dir));
    assertEquals(Files.getPosixFilePermissions(plainFile),
        Files.getPosixFilePermissions(dir.resolve("manifest.json")));
    List<Path> npy = ModelFiles.exportNpy(sample(), tmp.resolve("npy"));
    assertEquals(Files.getPosixFilePermissions(plainFile), Files.getPosixFilePermissions(npy.get(0)));
  }

  @Test
  void aTargetInADirectoryThatTakesNoNewEntryIsRefusedBeforeAnythingIsWritten() {
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "a Linux /proc");
    IOException e = assertThrows(IOException.class, () -> ModelFiles.checkSavable(Path.of("/proc/model")));
    assertTrue(e.getMessage().contains("/proc/.model.probe-"), e.getMessage());
  }

  @Test
  void aFileGivenAsTheModelDirectoryIsNamedAsSuch() throws IOException {
    Path file = Files.writeString(tmp.resolve("job.conf"), "x");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.readManifest(file));
    assertEquals(file + " is a file, not a model directory (docs/MODEL-FORMAT.md)", e.getMessage());
  }

  @Test
  void loadNamesTheMissingManifest() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("m"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().contains("has no manifest.json"), e.getMessage());
  }

  @Test
  void loadNamesAMissingParameterFile() throws IOException {
    Path dir = saved();
    Files.delete(dir.resolve("dense2.weight.f32"));
    assertLoadFails(dir, "parameter file dense2.weight.f32 (for dense2.weight) listed in "
        + "manifest.json is missing");
  }

  @Test
  void loadNamesAFileOfTheWrongLength() throws IOException {
    Path dir = saved();
    Files.write(dir.resolve("dense1.bias.f32"), new byte[12]);
    assertLoadFails(dir, "parameter file dense1.bias.f32 has 12 bytes, manifest.json says 8");
  }

  @Test
  void loadNamesAFileWhoseHashDiffers() throws IOException {
    Path dir = saved();
    Path f = dir.resolve("dense2.bias.f32");
    byte[] raw = Files.readAllBytes(f);
    raw[5] ^= 1;
    Files.write(f, raw);
    assertLoadFails(dir, "parameter file dense2.bias.f32 has SHA-256 ");
    assertLoadFails(dir, "(the file is corrupt or was changed)");
  }

  @Test
  void loadRejectsAnUnknownFormatVersion() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"formatVersion\": 1", "\"formatVersion\": 2");
    assertLoadFails(dir, "has format version 2, this reader supports version 1 only");
  }

  @Test
  void loadRejectsAnotherFormat() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"shardtrain-model\"", "\"other\"");
    assertLoadFails(dir, "has format \"other\", expected \"shardtrain-model\"");
  }

  @Test
  void loadReportsWhereTheManifestJsonIsBroken() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"version\": 1234567890123,", "\"version\": 1234567890123");
    assertLoadFails(dir, "manifest.json is not valid JSON: expected ',' or '}' at line 5, column 3");
  }

  @Test
  void loadNamesAMissingOrMistypedField() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"sha256\"", "\"sha\"");
    assertLoadFails(dir, "manifest.json lacks the field parameters[0].sha256");
    editManifest(dir, "\"sha\"", "\"sha256\"");
    editManifest(dir, "\"shape\": [7, 2]", "\"shape\": [7, 2.5]");
    assertLoadFails(dir, "parameters[0].shape[1] must be a 64-bit integer, got 2.5");
  }

  @Test
  void loadRejectsAByteCountThatDisagreesWithTheShape() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"bytes\": 56", "\"bytes\": 52");
    assertLoadFails(dir, "parameters[0].bytes is 52 but shape [7, 2] of float32 needs 56");
  }

  @Test
  void loadRefusesAFileNameOutsideTheModelDirectory() throws IOException {
    Path dir = saved();
    editManifest(dir, "\"file\": \"dense1.bias.f32\"", "\"file\": \"../dense1.bias.f32\"");
    assertLoadFails(dir, "file \"../dense1.bias.f32\" is not a plain file name");
  }

  @Test
  void exampleManifestInTheFormatDocumentLoads() throws IOException {
    String doc = Files.readString(Path.of("..", "docs", "MODEL-FORMAT.md"));
    int start = doc.indexOf("```json\n") + "```json\n".length();
    String json = doc.substring(start, doc.indexOf("```", start));
    Path dir = Files.createDirectories(tmp.resolve("example"));
    Files.writeString(dir.resolve("manifest.json"), json);
    writeFloats(dir.resolve("dense1.weight.f32"), 0.5f, -1f, 0.25f, 2f, 0f, -0.125f);
    writeFloats(dir.resolve("dense1.bias.f32"), 0.1f, 0f, -0.1f);
    ModelSnapshot s = ModelFiles.load(dir);
    assertEquals(1200, s.version());
    assertEquals("relu", s.description().get("activation"));
    assertArrayEquals(new int[] {2, 3}, s.parameter("dense1.weight").shape());
    assertArrayEquals(new float[] {0.1f, 0f, -0.1f}, s.parameter("dense1.bias").values());
    assertEquals(Instant.parse("2024-05-01T12:00:00.123Z"), ModelFiles.readManifest(dir).createdAt());
  }

  private static void writeFloats(Path f, float... v) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
    b.asFloatBuffer().put(v);
    Files.write(f, b.array());
  }

  private Path saved() throws IOException {
    Path dir = tmp.resolve("m");
    ModelFiles.save(dir, sample());
    return dir;
  }

  private static void editManifest(Path dir, String from, String to) throws IOException {
    Path f = dir.resolve("manifest.json");
    String json = Files.readString(f, StandardCharsets.UTF_8);
    assertTrue(json.contains(from), "manifest has no " + from + ":\n" + json);
    Files.writeString(f, json.replace(from, to), StandardCharsets.UTF_8);
  }

  private static void assertLoadFails(Path dir, String expected) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().contains(expected), "message: " + e.getMessage());
  }

  @Test
  void manifestShapeWhoseElementCountWrapsToZeroIsRefused() throws Exception {
    Path dir = tmp.resolve("m");
    ModelFiles.save(dir, sample());
    Path manifest = dir.resolve(ModelFiles.MANIFEST);
    Files.writeString(manifest, Files.readString(manifest).replace("\"shape\": [3]", "\"shape\": [65536, 65536, 65536, 65536]")
        .replace("\"bytes\": 12", "\"bytes\": 0"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.load(dir));
    assertTrue(e.getMessage().endsWith("bytes is 0 but shape [65536, 65536, 65536, 65536] of float32 needs more than"
        + " an array holds"), e.getMessage());
  }

  @Test
  void deeplyNestedManifestIsRefusedWithoutOverflowingTheStack() throws Exception {
    // The JSON parser recurses once per level.
    Path dir = tmp.resolve("nested");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(ModelFiles.MANIFEST), "[".repeat(100_000));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelFiles.load(dir));
    assertEquals(dir.resolve(ModelFiles.MANIFEST) + " is not valid JSON: arrays and objects nested deeper than 256"
        + " at line 1, column 257", e.getMessage());
  }
}
