package io.shardtrain.compute;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/** Deleting a directory tree, which the JDK has no single call for, and new entries for files written in place. */
public final class FileTrees {
  private FileTrees() {}

  /**
   * Why the file system refused, in words: the exception's own reason when it has one, else what
   * its type says ("permission denied"), as {@link FileSystemException#getMessage} does not.
   */
  public static String reason(FileSystemException e) {
    if (e.getReason() != null) return e.getReason();
    if (e instanceof AccessDeniedException) return "permission denied";
    if (e instanceof NoSuchFileException) return "no such file or directory";
    if (e instanceof FileAlreadyExistsException) return "a file is in the way";
    if (e instanceof NotDirectoryException) return "not a directory";
    return "cannot use the path (" + e.getClass().getSimpleName() + ")";
  }

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
