package io.shardtrain.persistence.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.fuzz.Hostile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Model directories, checkpoints and {@code .npy} files on hostile bytes: a saved model's
 * {@code manifest.json}, a checkpoint's {@code checkpoint.json} and an exported {@code .npy} file,
 * mutated (or random). Each load returns or throws an IllegalArgumentException naming the file,
 * without allocating more than the input warrants ({@link Hostile#check}).
 */
class ModelFilesFuzzTest {
  private static Path root;
  private static Path model;
  private static Path npy;

  @BeforeContainer
  static void save() throws IOException {
    root = Files.createTempDirectory("model-fuzz");
    ModelSnapshot snapshot = new ModelSnapshot(Map.of("by", "fuzz"), 7, List.of(
        new ParameterValues("dense1.weight", new int[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6}),
        new ParameterValues("dense1.bias", new int[] {3}, new float[] {0.5f, -0.5f, 0})));
    model = root.resolve("model");
    CheckpointFiles.save(model, new Checkpoint(snapshot,
        List.of(new Checkpoint.Slots("dense1.bias", 4, 128, List.of(new float[] {1, 2, 3}))),
        List.of(new Checkpoint.ReaderOffset(0, 1, 8)), 1), ModelFiles.IfExists.FAIL);
    npy = ModelFiles.exportNpy(model, root.resolve("npy")).get(1);
  }

  @AfterContainer
  static void remove() throws IOException {
    io.shardtrain.compute.FileTrees.delete(root);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code file} replaced by {@code input} while {@code load} runs; its error must name the file. */
  private static void loadsOrNamesTheFile(Path file, byte[] input, Hostile.Decoding load) throws IOException {
    byte[] original = Files.readAllBytes(file);
    Files.write(file, input);
    try {
      // The parameter files are read whole once the manifest passes: they count as input.
      Throwable thrown = Hostile.check(input, 1 << 20, 256, load, List.of(IllegalArgumentException.class));
      if (thrown != null) assertTrue(thrown.getMessage().contains(file.getFileName().toString())
          || thrown.getMessage().contains(file.getParent().toString()), thrown.getMessage());
    } finally {
      Files.write(file, original);
    }
  }

  @Property
  void manifestsAreReadOrRefused(@ForAll("manifests") byte[] input) throws IOException {
    loadsOrNamesTheFile(model.resolve(ModelFiles.MANIFEST), input, () -> ModelFiles.load(model));
  }

  @Provide
  Arbitrary<byte[]> manifests() {
    return Hostile.text(List.of(read(model.resolve(ModelFiles.MANIFEST))));
  }

  @Property
  void checkpointDescriptionsAreReadOrRefused(@ForAll("checkpoints") byte[] input) throws IOException {
    loadsOrNamesTheFile(model.resolve(CheckpointFiles.FILE), input, () -> CheckpointFiles.load(model));
  }

  @Provide
  Arbitrary<byte[]> checkpoints() {
    return Hostile.text(List.of(read(model.resolve(CheckpointFiles.FILE))));
  }

  @Property
  void npyFilesAreReadOrRefused(@ForAll("npys") byte[] input) throws IOException {
    loadsOrNamesTheFile(npy, input, () -> NpyReader.read(npy));
  }

  @Provide
  Arbitrary<byte[]> npys() {
    try {
      byte[] bytes = Files.readAllBytes(npy);
      // The header is text: a second seed with the shape written the way numpy writes a 1-d one.
      String text = new String(bytes, StandardCharsets.ISO_8859_1).replace("(3,)", "(3, )");
      return Hostile.bytes(List.of(bytes, text.getBytes(StandardCharsets.ISO_8859_1)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Property
  void jsonIsParsedOrRefused(@ForAll("json") byte[] input) {
    Hostile.check(input, 1 << 20, 256, () -> Json.parse(new String(input, StandardCharsets.UTF_8)),
        List.of(IllegalArgumentException.class));
  }

  @Provide
  Arbitrary<byte[]> json() {
    return Hostile.text(List.of("{\"a\": [1, 2.5e3, -0, true, null, \"x\\u00e9\\n\"], \"b\": {}}", "[[[[]]]]",
        "\"" + "\\\\".repeat(8) + "\"", "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH)));
  }
}
