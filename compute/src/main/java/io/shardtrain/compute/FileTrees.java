package io.shardtrain.compute;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/** Deleting a directory tree, which the JDK has no single call for, and new entries for files written in place. */
public final class FileTrees {
  private FileTrees() {}

  /** Deletes {@code root} and everything under it, deepest first; nothing when it does not exist. */
  public static void delete(Path root) throws IOException {
    if (root == null || !Files.exists(root)) return;
    List<Path> deepestFirst;
    try (Stream<Path> walk = Files.walk(root)) {
      deepestFirst = walk.sorted(Comparator.reverseOrder()).toList();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    for (Path p : deepestFirst) Files.deleteIfExists(p);
  }

  /**
   * A new file or directory in {@code parent}, {@code prefix} and a random part and {@code suffix}
   * its name, with the permissions the umask gives: {@code Files.createTemp*} gives 0700 and 0600,
   * which no other user (a Python client's, another service's) could read once renamed into place.
   */
  public static Path createFresh(Path parent, String prefix, String suffix, boolean directory) throws IOException {
    while (true) {
      Path p = parent.resolve(prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + suffix);
      try {
        return directory ? Files.createDirectory(p) : Files.createFile(p);
      } catch (FileAlreadyExistsException e) {
        // taken: another name
      }
    }
  }

  /** {@link #delete}, for temporary directories: a leftover is harmless, so a failure is ignored. */
  public static void deleteQuietly(Path root) {
    try {
      delete(root);
    } catch (IOException | UncheckedIOException e) {
      // What is left is the operating system's to clean.
    }
  }
}
