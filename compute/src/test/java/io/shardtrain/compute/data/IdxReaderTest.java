package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdxReaderTest {
  @TempDir Path dir;

  private static final byte[] PIXELS = {0, (byte) 255, (byte) 51, (byte) 102, 1, 2, 3, 4, (byte) 200, 0, 0, 10};
  private static final float[] SCALED = {0f, 1f, 0.2f, 0.4f, 1 / 255f, 2 / 255f, 3 / 255f, 4 / 255f,
      200 / 255f, 0f, 0f, 10 / 255f};

  @Test
  void readsImagesScaledToUnitIntervalAndLabels() throws Exception {
    Path images = IdxFiles.write(dir.resolve("img"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), false);
    Path labels = IdxFiles.write(dir.resolve("lab"), IdxFiles.idx(new int[] {3}, new byte[] {7, 0, (byte) 200}), false);
    IdxReader.Images im = IdxReader.readImages(images);
    assertEquals(3, im.count());
    assertEquals(2, im.rows());
    assertEquals(2, im.cols());
    assertArrayEquals(SCALED, im.pixels(), 1e-7f);
    assertArrayEquals(new int[] {7, 0, 200}, IdxReader.readLabels(labels));
  }

  @Test
  void gzipIsRecognisedByMagicBytesNotByName() throws Exception {
    Path images = IdxFiles.write(dir.resolve("plain-looking-name"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), true);
    assertEquals(0x1f, Files.readAllBytes(images)[0] & 0xff);
    assertArrayEquals(SCALED, IdxReader.readImages(images).pixels(), 1e-7f);
  }

  @Test
  void badMagicNamesTheFile() throws Exception {
    byte[] bytes = IdxFiles.idx(new int[] {3}, new byte[] {1, 2, 3});
    bytes[0] = 0x50;
    Path f = IdxFiles.write(dir.resolve("bad-magic"), bytes, false);
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> IdxReader.readLabels(f));
    assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("bad magic number 50 00 08 01"), e.getMessage());
  }

  @Test
  void truncatedDataNamesFileAndCounts() throws Exception {
    byte[] full = IdxFiles.idx(new int[] {3, 2, 2}, PIXELS);
    Path f = IdxFiles.write(dir.resolve("short"), Arrays.copyOf(full, full.length - 5), false);
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> IdxReader.readImages(f));
    assertTrue(e.getMessage().startsWith(f + ": truncated"), e.getMessage());
    assertTrue(e.getMessage().contains("need 12 data bytes but only 7"), e.getMessage());
  }

  @Test
  void truncatedGzipNamesTheFile() throws Exception {
    Path whole = IdxFiles.write(dir.resolve("whole.gz"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), true);
    byte[] gz = Files.readAllBytes(whole);
    Path f = Files.write(dir.resolve("cut.gz"), Arrays.copyOf(gz, gz.length - 12));
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> IdxReader.readImages(f));
    assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
  }

  @Test
  void labelFileWithImageRankIsRejected() throws Exception {
    Path f = IdxFiles.write(dir.resolve("rank3"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), false);
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> IdxReader.readLabels(f));
    assertTrue(e.getMessage().contains("a label file has 1 dimension"), e.getMessage());
  }

  @Test
  void mnistLoadsPlainAndGzippedFilesOfTheSameNames() throws Exception {
    IdxFiles.write(dir.resolve("train-images-idx3-ubyte.gz"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), true);
    IdxFiles.write(dir.resolve("train-labels-idx1-ubyte"), IdxFiles.idx(new int[] {3}, new byte[] {5, 0, 9}), false);
    IdxFiles.write(dir.resolve("t10k-images-idx3-ubyte"),
        IdxFiles.idx(new int[] {1, 2, 2}, new byte[] {0, 0, 0, (byte) 255}), false);
    IdxFiles.write(dir.resolve("t10k-labels-idx1-ubyte.gz"), IdxFiles.idx(new int[] {1}, new byte[] {3}), true);
    Mnist.Split s = Mnist.load(dir);
    assertEquals(3, s.train().size());
    assertEquals(4, s.train().dim());
    assertEquals(10, s.train().numClasses());
    assertEquals(9, s.train().label(2));
    assertArrayEquals(new float[] {200 / 255f, 0, 0, 10 / 255f}, s.train().row(2), 1e-7f);
    assertEquals(3, s.test().label(0));
    assertEquals(1f, s.test().feature(0, 3));
  }

  @Test
  void mnistRejectsImageAndLabelCountMismatch() throws Exception {
    IdxFiles.write(dir.resolve("train-images-idx3-ubyte"), IdxFiles.idx(new int[] {3, 2, 2}, PIXELS), false);
    IdxFiles.write(dir.resolve("train-labels-idx1-ubyte"), IdxFiles.idx(new int[] {2}, new byte[] {5, 0}), false);
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> Mnist.load(dir));
    assertTrue(e.getMessage().contains("holds 3 images but"), e.getMessage());
  }

  @Test
  void mnistNamesBothCandidatesWhenAFileIsMissing() {
    NoSuchFileException e = assertThrows(NoSuchFileException.class, () -> Mnist.load(dir));
    assertTrue(e.getMessage().contains("train-images-idx3-ubyte"), e.getMessage());
    assertTrue(e.getMessage().contains("train-images-idx3-ubyte.gz"), e.getMessage());
  }

  @Test
  void realMnistHasSixtyThousandTrainAndTenThousandTestExamples() throws Exception {
    Path real = Path.of("/tmp/mn/package/data");
    assumeTrue(Files.isRegularFile(real.resolve(Mnist.TRAIN_IMAGES)), "real MNIST files not present");
    Mnist.Split s = Mnist.load(real);
    assertEquals(60000, s.train().size());
    assertEquals(10000, s.test().size());
    assertEquals(784, s.train().dim());
    assertEquals(5, s.train().label(0));
    assertEquals(7, s.test().label(0));
    int[] counts = new int[10];
    for (int i = 0; i < s.train().size(); i++) counts[s.train().label(i)]++;
    assertEquals(6742, counts[1]); // the well-known class count of digit 1 in MNIST train
  }

  @Test
  void headerClaimingTwoGigabytesIsRefusedWithoutAllocatingThem() throws Exception {
    // 16 bytes whose dimensions claim 2^31 - 9 data bytes.
    byte[] bytes = {0, 0, 8, 2, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xf7, 0, 0, 0, 1, 9, 9, 9, 9};
    Path f = IdxFiles.write(dir.resolve("claims-2gb"), bytes, false);
    long before = io.shardtrain.compute.fuzz.Hostile.allocatedBytes();
    MalformedDataException e = assertThrows(MalformedDataException.class, () -> IdxReader.read(f));
    long allocated = io.shardtrain.compute.fuzz.Hostile.allocatedBytes() - before;
    assertEquals(f + ": truncated, dimensions [2147483639, 1] need 2147483639 data bytes but only 4 are present",
        e.getMessage());
    assertTrue(allocated < 1 << 20, allocated + " bytes allocated");
  }
}
