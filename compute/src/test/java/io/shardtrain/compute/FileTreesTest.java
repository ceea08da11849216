package io.shardtrain.compute;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FileTreesTest {
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
