package io.shardtrain.samples.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.shardtrain.compute.data.MalformedDataException;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TarGzTest {
  @TempDir Path dir;

  /** Writes a one-entry ustar archive by hand, so the test does not depend on a tar tool. */
  static byte[] ustar(String name, byte[] content) {
    byte[] h = new byte[512];
    put(h, 0, name);
    put(h, 100, "0000644");
    put(h, 108, "0001750");
    put(h, 116, "0001750");
    put(h, 124, String.format("%011o", content.length));
    put(h, 136, "14000000000");
    h[156] = '0';
    put(h, 257, "ustar");
    put(h, 263, "00");
    for (int i = 148; i < 156; i++) h[i] = ' ';
    int sum = 0;
    for (byte b : h) sum += b & 0xff;
    put(h, 148, String.format("%06o", sum));
    h[154] = 0;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(h, 0, 512);
    out.write(content, 0, content.length);
    out.write(new byte[(512 - content.length % 512) % 512], 0, (512 - content.length % 512) % 512);
    out.write(new byte[1024], 0, 1024);
    return out.toByteArray();
  }

  private static void put(byte[] h, int off, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, h, off, b.length);
  }

  static Path gzip(Path file, byte[] bytes) throws Exception {
    try (OutputStream os = new GZIPOutputStream(Files.newOutputStream(file))) {
      os.write(bytes);
    }
    return file;
  }

  @Test
  void extractsAHandWrittenUstarEntry() throws Exception {
    byte[] content = "hello, tar".getBytes(StandardCharsets.UTF_8);
    Path tgz = gzip(dir.resolve("a.tgz"), ustar("package/data/hello.txt", content));
    Path out = Files.createDirectory(dir.resolve("out"));
    Map<String, Path> got = TarGz.extract(tgz, Set.of("package/data/hello.txt"), out);
    assertEquals(Map.of("package/data/hello.txt", out.resolve("hello.txt")), got);
    assertArrayEquals(content, Files.readAllBytes(out.resolve("hello.txt")));
  }

  @Test
  void corruptHeaderChecksumIsReported() throws Exception {
    byte[] tar = ustar("package/data/x", new byte[] {1, 2, 3});
    tar[10] ^= 1; // change the name after the checksum was computed
    Path tgz = gzip(dir.resolve("bad.tgz"), tar);
    MalformedDataException e = assertThrows(MalformedDataException.class,
        () -> TarGz.extract(tgz, Set.of("package/data/x"), dir));
    assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
    assertTrue(e.getMessage().startsWith(tgz.toString()), e.getMessage());
  }

  @Test
  void archiveCutBeforeItsEndMarkerIsReported() throws Exception {
    byte[] tar = ustar("package/data/x", new byte[600]);
    byte[] cut = java.util.Arrays.copyOf(tar, 512 * 3); // header + two content blocks, no end marker
    Path tgz = gzip(dir.resolve("cut.tgz"), cut);
    MalformedDataException e = assertThrows(MalformedDataException.class,
        () -> TarGz.extract(tgz, Set.of("package/data/x"), dir));
    assertTrue(e.getMessage().contains("truncated tar archive"), e.getMessage());
  }

  @Test
  void extractsOnlyWantedFilesFromGnuAndPaxArchivesWithLongNames() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/tar")) || Files.isExecutable(Path.of("/bin/tar")), "no tar tool");
    String longDir = "package/data/" + "d".repeat(120);
    Path src = dir.resolve("src");
    Files.createDirectories(src.resolve(longDir));
    byte[] big = new byte[70_000];
    for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 31);
    Files.write(src.resolve("package/data/big.bin"), big);
    Files.write(src.resolve("package/data/skip.txt"), "skip".getBytes(StandardCharsets.UTF_8));
    Files.write(src.resolve(longDir + "/deep.txt"), "deep".getBytes(StandardCharsets.UTF_8));
    for (String format : List.of("gnu", "pax")) {
      Path tgz = dir.resolve(format + ".tgz");
      Process p = new ProcessBuilder("tar", "--format=" + format, "-czf", tgz.toString(), "-C", src.toString(), "package")
          .redirectErrorStream(true).start();
      String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, p.waitFor(), log);
      Path out = Files.createDirectory(dir.resolve("out-" + format));
      Map<String, Path> got = TarGz.extract(tgz,
          Set.of("package/data/big.bin", longDir + "/deep.txt", "package/data/absent"), out);
      assertEquals(Set.of("package/data/big.bin", longDir + "/deep.txt"), got.keySet(), format);
      assertArrayEquals(big, Files.readAllBytes(out.resolve("big.bin")), format);
      assertEquals("deep", Files.readString(out.resolve("deep.txt")), format);
      assertFalse(Files.exists(out.resolve("skip.txt")), format);
    }
  }
}
