package io.shardtrain.compute.data;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Loads MNIST, or Fashion-MNIST which uses the same four file names, from a directory holding
 * {@code train-images-idx3-ubyte}, {@code train-labels-idx1-ubyte}, {@code t10k-images-idx3-ubyte}
 * and {@code t10k-labels-idx1-ubyte}, each either plain or with a {@code .gz} suffix.
 *
 * <p>Images become rows of 784 floats in [0, 1]; labels become 10 classes.
 */
public final class Mnist {
  public static final int NUM_CLASSES = 10;
  public static final String TRAIN_IMAGES = "train-images-idx3-ubyte";
  public static final String TRAIN_LABELS = "train-labels-idx1-ubyte";
  public static final String TEST_IMAGES = "t10k-images-idx3-ubyte";
  public static final String TEST_LABELS = "t10k-labels-idx1-ubyte";

  private Mnist() {}

  /** The train and test parts. */
  public record Split(Dataset train, Dataset test) {}

  /** Loads both parts from {@code dir}. */
  public static Split load(Path dir) throws IOException {
    return new Split(
        load(dir, TRAIN_IMAGES, TRAIN_LABELS),
        load(dir, TEST_IMAGES, TEST_LABELS));
  }

  private static Dataset load(Path dir, String imagesName, String labelsName) throws IOException {
    Path imagesFile = find(dir, imagesName);
    Path labelsFile = find(dir, labelsName);
    IdxReader.Images images = IdxReader.readImages(imagesFile);
    int[] labels = IdxReader.readLabels(labelsFile);
    if (images.count() != labels.length) {
      throw new MalformedDataException(imagesFile + " holds " + images.count() + " images but " + labelsFile
          + " holds " + labels.length + " labels");
    }
    for (int i = 0; i < labels.length; i++) {
      if (labels[i] >= NUM_CLASSES) {
        throw new MalformedDataException(labelsFile + ": label " + labels[i] + " of example " + i + " is not a digit 0-9");
      }
    }
    return Dataset.classification(images.pixels(), images.pixelsPerImage(), labels, NUM_CLASSES);
  }

  /** The plain file when present, else the {@code .gz} one. */
  static Path find(Path dir, String name) throws IOException {
    Path plain = dir.resolve(name);
    if (Files.isRegularFile(plain)) return plain;
    Path gz = dir.resolve(name + ".gz");
    if (Files.isRegularFile(gz)) return gz;
    throw new NoSuchFileException(plain.toString(), gz.toString(), "neither file exists");
  }
}
