package io.shardtrain.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FileTreesTest {
  @Test
  void aFileSystemRefusalIsSaidInWordsItsOwnReasonFirst() {
    assertEquals("permission denied", FileTrees.reason(new java.nio.file.AccessDeniedException("/m")));
    assertEquals("no such file or directory", FileTrees.reason(new java.nio.file.NoSuchFileException("/m")));
    assertEquals("a file is in the way", FileTrees.reason(new java.nio.file.FileAlreadyExistsException("/m")));
    assertEquals("not a directory", FileTrees.reason(new java.nio.file.NotDirectoryException("/m")));
    assertEquals("Read-only file system",
        FileTrees.reason(new java.nio.file.FileSystemException("/m", null, "Read-only file system")));
    assertEquals("cannot use the path (FileSystemLoopException)",
        FileTrees.reason(new java.nio.file.FileSystemLoopException("/m")));
  }

  @Test
  void deletesATreeWithNestedDirectoriesAndLeavesItsParent() throws Exception {
    Path parent = Files.createTempDirectory("file-trees");
    Path root = Files.createDirectories(parent.resolve("root/a/b"));
    Files.writeString(root.resolve("f.txt"), "x");
    Files.writeString(parent.resolve("root/g.txt"), "y");
    FileTrees.delete(parent.resolve("root"));
    assertFalse(Files.exists(parent.resolve("root")));
    assertTrue(Files.isDirectory(parent));
    Files.delete(parent);
  }

  @Test
  void aMissingTreeIsNothingToDelete() throws Exception {
    Path parent = Files.createTempDirectory("file-trees");
    Path missing = parent.resolve("never-made");
    FileTrees.delete(missing);
    FileTrees.deleteQuietly(missing);
    FileTrees.deleteQuietly(null);
    assertFalse(Files.exists(missing));
    Files.delete(parent);
  }
}
