package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.fuzz.Hostile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The data readers on hostile files: each input is a valid file mutated (or random bytes), and
 * each reader must read it or throw a {@link MalformedDataException} naming the file, without
 * allocating more than its input warrants ({@link Hostile#check}).
 */
class DataReadersFuzzTest {
  private static Path dir;

  @BeforeContainer
  static void makeDir() throws IOException {
    dir = Files.createTempDirectory("data-fuzz");
  }

  @AfterContainer
  static void removeDir() throws IOException {
    try (var files = Files.list(dir)) {
      for (Path p : files.toList()) Files.delete(p);
    }
    Files.delete(dir);
  }

  /** Reads {@code input} from a file with {@code read}; the error, if any, must name the file. */
  private static void readsOrNamesTheFile(String name, byte[] input, long slack, int perByte, Reading read) {
    Path file = dir.resolve(name);
    try {
      Files.write(file, input);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Throwable thrown = Hostile.check(input, slack, perByte, () -> read.read(file),
        List.of(MalformedDataException.class));
    if (thrown != null) assertTrue(thrown.getMessage().contains(file.toString()), thrown.getMessage());
  }

  private interface Reading {
    void read(Path file) throws Exception;
  }

  @Property
  void idxFilesAreReadOrRefused(@ForAll("idx") byte[] input) {
    // Images become floats: 4 bytes per input byte, and a gzip stream's buffers.
    readsOrNamesTheFile("f.idx", input, 1 << 20, 64, f -> {
      IdxReader.read(f);
      if (input.length > 3 && input[3] == 3) IdxReader.readImages(f);
      if (input.length > 3 && input[3] == 1) IdxReader.readLabels(f);
    });
  }

  @Provide
  Arbitrary<byte[]> idx() {
    byte[] images = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8};
    byte[] labels = {0, 0, 8, 1, 0, 0, 0, 3, 7, 8, 9};
    return Hostile.bytes(List.of(images, labels, gzip(images), gzip(labels)));
  }

  private static byte[] gzip(byte[] b) {
    var out = new ByteArrayOutputStream();
    try (var z = new GZIPOutputStream(out)) {
      z.write(b);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  // Text readers allocate lines, fields and parsed values: a few hundred bytes per input byte.
  private static final int TEXT_PER_BYTE = 1024;

  @Property
  void csvFilesAreReadOrRefused(@ForAll("csv") byte[] input) {
    readsOrNamesTheFile("f.csv", input, 2 << 20, TEXT_PER_BYTE, f -> {
      CsvReader.create().read(f);
      CsvReader.create().withLabelColumn("y").withTargets().read(f);
    });
  }

  @Provide
  Arbitrary<byte[]> csv() {
    return Hostile.text(List.of("1,2,0\n3,4,1\n", "a,b,y\n0.5,\"2\",1\n\n1e3,-4,0\n", "x;y\n1;2\n"));
  }

  @Property
  void libSvmFilesAreReadOrRefused(@ForAll("libsvm") byte[] input) {
    // The dense rows a file asks for are capped by withMaxValues, not by the file's size.
    readsOrNamesTheFile("f.svm", input, 2 << 20, TEXT_PER_BYTE, f -> {
      LibSvmReader.create().withMaxValues(1 << 16).read(f);
      LibSvmReader.create().withMaxValues(1 << 16).withLabels(LibSvmReader.LabelKind.BINARY).read(f);
    });
  }

  @Provide
  Arbitrary<byte[]> libsvm() {
    return Hostile.text(List.of("1 1:0.5 3:2\n-1 2:1 # comment\n", "2 qid:3 1:1\n0 4:1e-3\n", "+1 7:1\n"));
  }

  @Property
  void criteoFilesAreReadOrRefused(@ForAll("criteo") byte[] input) {
    readsOrNamesTheFile("f.tsv", input, 2 << 20, TEXT_PER_BYTE, f -> new CriteoReader(1 << 10, 0).read(f));
  }

  @Provide
  Arbitrary<byte[]> criteo() {
    String ints = "1\t\t3\t-2\t5\t6\t7\t8\t9\t10\t11\t12\t13";
    String cats = "68fd1e64\t\t287e684f\t0a519c5c\t02cf9876\tc18be181\t92fb1d87\t\t2c14c412\t\t7cc72ec2"
        + "\t3b08e48b\t\t\tb28479f6\t\t\t\t\t\t\t\t\t\t\tffffffffffffffff";
    return Hostile.text(List.of("1\t" + ints + "\t" + cats + "\n0\t" + ints + "\t" + cats + "\n"));
  }
}
