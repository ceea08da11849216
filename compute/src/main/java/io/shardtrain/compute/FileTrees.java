package io.shardtrain.compute;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Deleting a directory tree, which the JDK has no single call for. */
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

  /** {@link #delete}, for temporary directories: a leftover is harmless, so a failure is ignored. */
  public static void deleteQuietly(Path root) {
    try {
      delete(root);
    } catch (IOException | UncheckedIOException e) {
      // What is left is the operating system's to clean.
    }
  }
}
