package io.shardtrain.samples.cli;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** The data set of the command-line tests, written where {@code --data-dir} finds it as fashion-mnist. */
final class TinyDataSet {
  private TinyDataSet() {}

  /**
   * A small IDX data set in the Fashion-MNIST layout: 8x8 images whose class is the quadrant
   * holding a bright blob (4 classes), so a model can learn it in a few steps.
   */
  static void write(Path dataDir) throws IOException {
    Path dir = dataDir.resolve("fashion-mnist");
    Files.createDirectories(dir);
    Random rnd = new Random(7);
    writeSplit(dir, "train", 512, rnd);
    writeSplit(dir, "t10k", 256, rnd);
  }

  private static void writeSplit(Path dir, String prefix, int n, Random rnd) throws IOException {
    byte[] images = new byte[n * 64];
    byte[] labels = new byte[n];
    for (int i = 0; i < n; i++) {
      int label = rnd.nextInt(4);
      labels[i] = (byte) label;
      int r0 = (label / 2) * 4, c0 = (label % 2) * 4;
      for (int p = 0; p < 64; p++) images[i * 64 + p] = (byte) rnd.nextInt(60);
      for (int r = r0; r < r0 + 4; r++) {
        for (int c = c0; c < c0 + 4; c++) images[i * 64 + r * 8 + c] = (byte) (150 + rnd.nextInt(100));
      }
    }
    try (var out = new DataOutputStream(Files.newOutputStream(dir.resolve(prefix + "-images-idx3-ubyte")))) {
      out.writeInt(0x00000803);
      out.writeInt(n);
      out.writeInt(8);
      out.writeInt(8);
      out.write(images);
    }
    try (var out = new DataOutputStream(Files.newOutputStream(dir.resolve(prefix + "-labels-idx1-ubyte")))) {
      out.writeInt(0x00000801);
      out.writeInt(n);
      out.write(labels);
    }
  }
}
