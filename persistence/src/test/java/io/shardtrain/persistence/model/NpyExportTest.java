package io.shardtrain.persistence.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NpyExportTest {
  @TempDir
  Path tmp;

  private static boolean numpy;

  @BeforeAll
  static void probeNumpy() {
    try {
      Process p = new ProcessBuilder("python3", "-c", "import numpy").redirectErrorStream(true)
          .start();
      p.getInputStream().readAllBytes();
      numpy = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException | InterruptedException e) {
      numpy = false;
    }
  }

  private static String headerText(byte[] file) {
    int len = ByteBuffer.wrap(file, 8, 2).order(ByteOrder.LITTLE_ENDIAN).getShort() & 0xffff;
    return new String(file, 10, len, StandardCharsets.US_ASCII);
  }

  @Test
  void oneDimensionalHeaderIsPaddedToAMultipleOfSixtyFourBytes() {
    // The 57-character dict does not fit with the 10-byte preamble in 64 bytes: 128 in all,
    // header length 118 (0x76), exactly what numpy.save writes for a float32 array of shape (5,).
    byte[] h = NpyWriter.header(new int[] {5});
    assertEquals(128, h.length);
    assertArrayEquals(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0},
        Arrays.copyOf(h, 10));
    String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }";
    assertEquals(57, dict.length());
    assertEquals(dict + " ".repeat(117 - dict.length()) + "\n", headerText(h));
  }

  @Test
  void twoDimensionalShapeIsAPythonTupleWithComma() {
    byte[] h = NpyWriter.header(new int[] {784, 128});
    assertEquals(0, h.length % 64);
    String text = headerText(h);
    assertTrue(text.startsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (784, 128), }"),
        text);
    assertTrue(text.endsWith(" \n"), text);
    assertEquals("(2, 3, 4)", NpyWriter.shapeTuple(new int[] {2, 3, 4}));
    // A dict that just fills a 64-byte block still ends in '\n' and pads to the next multiple.
    for (int d = 1; d < 1_000_000_000; d *= 7) {
      byte[] hd = NpyWriter.header(new int[] {d, d});
      assertEquals(0, hd.length % 64, "shape (" + d + ", " + d + ")");
      assertEquals('\n', hd[hd.length - 1]);
    }
  }

  @Test
  void exportWritesHeaderThenRawLittleEndianData() throws IOException {
    List<Path> files = ModelFiles.exportNpy(ModelFilesTest.sample(), tmp.resolve("npy"));
    assertEquals(List.of("dense1.weight.npy", "dense1.bias.npy", "dense2.weight.npy",
        "dense2.bias.npy"), files.stream().map(p -> p.getFileName().toString()).toList());
    byte[] bias = Files.readAllBytes(files.get(1));
    assertEquals(128 + 8, bias.length);
    ByteBuffer le = ByteBuffer.wrap(bias).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(0.5f, le.getFloat(128));
    assertEquals(-0.25f, le.getFloat(132));
  }

  @Test
  void ownReaderReadsExportedFilesBitForBit() throws IOException {
    ModelSnapshot s = ModelFilesTest.sample();
    Path model = tmp.resolve("model");
    ModelFiles.save(model, s);
    List<Path> files = ModelFiles.exportNpy(model, tmp.resolve("npy"));
    List<ParameterValues> back = new ArrayList<>();
    for (Path f : files) back.add(NpyReader.read(f));
    assertEquals(s.parameters(), back);
  }

  @Test
  void readerRejectsOtherDtypesAndShortData() throws IOException {
    Path f = tmp.resolve("x.npy");
    NpyWriter.write(f, new int[] {2, 2}, new float[] {1, 2, 3, 4});
    byte[] ok = Files.readAllBytes(f);

    byte[] f8 = ok.clone();
    f8[10 + "{'descr': '<f".length()] = '8';
    Files.write(f, f8);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> NpyReader.read(f));
    assertTrue(e.getMessage().contains("has dtype '<f8', only little-endian float32"),
        e.getMessage());

    Files.write(f, Arrays.copyOf(ok, ok.length - 4));
    e = assertThrows(IllegalArgumentException.class, () -> NpyReader.read(f));
    assertTrue(e.getMessage().contains("has 12 data bytes, shape (2, 2) of float32 needs 16"),
        e.getMessage());
  }

  @Test
  void numpyLoadsExportedFilesExactlyAndWouldWriteTheSameBytes() throws Exception {
    Assumptions.assumeTrue(numpy, "python3 with numpy is not available");
    ModelSnapshot s = ModelFilesTest.sample();
    List<Path> files = ModelFiles.exportNpy(s, tmp.resolve("npy"));
    String script = String.join("\n",
        "import io, sys, numpy as np",
        "for f in sys.argv[1:]:",
        "    a = np.load(f, allow_pickle=False)",
        "    buf = io.BytesIO()",
        "    np.save(buf, a)",
        "    same = buf.getvalue() == open(f, 'rb').read()",
        "    print(a.dtype.str, a.shape, a.tobytes().hex(), same)");
    List<String> cmd = new ArrayList<>(List.of("python3", "-c", script));
    for (Path f : files) cmd.add(f.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    List<String> lines = out.lines().toList();
    assertEquals(4, lines.size(), out);
    for (int i = 0; i < 4; i++) {
      ParameterValues pv = s.parameters().get(i);
      ByteBuffer le = ByteBuffer.allocate(4 * pv.size()).order(ByteOrder.LITTLE_ENDIAN);
      le.asFloatBuffer().put(pv.values());
      String expected = "<f4 " + NpyWriter.shapeTuple(pv.shape()) + " "
          + HexFormat.of().formatHex(le.array()) + " True";
      assertEquals(expected, lines.get(i), pv.name());
    }
  }

  @Test
  void shapeWhoseElementCountWrapsToZeroIsRefused() throws IOException {
    // 65536^4 is 2^64, which a long wraps to 0.
    Path f = tmp.resolve("wraps.npy");
    NpyWriter.write(f, new int[] {0}, new float[0]);
    String header = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1)
        .replace("(0,)", "(65536, 65536, 65536, 65536)");
    byte[] bytes = header.getBytes(StandardCharsets.ISO_8859_1);
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putShort(8, (short) (bytes.length - 10));
    Files.write(f, bytes);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NpyReader.read(f));
    assertTrue(e.getMessage().endsWith("has 0 data bytes, shape (65536, 65536, 65536, 65536) of float32 needs more"
        + " than an array holds"), e.getMessage());
  }
}
