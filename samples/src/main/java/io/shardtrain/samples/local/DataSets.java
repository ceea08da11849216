package io.shardtrain.samples.local;

import io.shardtrain.compute.data.DataUnavailableException;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.Mnist;
import io.shardtrain.samples.data.MnistFetcher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Loads a named data set, fetching it into the data directory when the project can. */
public final class DataSets {
  /** Where Debian's package dataset-fashion-mnist puts the files. */
  static final Path FASHION_MNIST_DEBIAN = Path.of("/usr/share/datasets/fashion-mnist");

  /** The data sets an MLP trains on, by the names {@link #load} takes. */
  public static final List<String> NAMES = List.of("mnist", "fashion-mnist");

  private DataSets() {}

  /** Refuses a name that neither an MLP ({@link #NAMES}) nor a factorization machine ({@link CtrData}) trains on. */
  public static void requireKnown(String name) {
    if (!NAMES.contains(name) && !CtrData.isCtr(name)) {
      throw new IllegalArgumentException("unknown dataset '" + name + "': expected " + String.join(", ", NAMES)
          + " (an MLP), ctr or criteo:PATH (a factorization machine)");
    }
  }

  public record TrainTest(Dataset train, Dataset test) {}

  /** Reads the data set, then collects the heap ({@link #settleHeap}). */
  public static TrainTest load(String name, Path dataDir) throws java.io.IOException {
    TrainTest data = read(name, dataDir);
    settleHeap();
    return data;
  }

  /**
   * Collects the heap once, after a data set was read and before training starts. The data set is
   * the process's largest long-lived object; left in the young generation, the first young
   * collection of training copies it, in the first steps (MNIST's 188 MB of features: a 330 ms
   * pause 0.14 s into a 3000-step run, {@code -Xlog:gc*}). A full collection now moves it to the old
   * generation while nothing waits on this process; {@code -XX:+DisableExplicitGC} turns it off.
   */
  private static void settleHeap() {
    System.gc();
  }

  private static TrainTest read(String name, Path dataDir) throws java.io.IOException {
    switch (name) {
      case "mnist": {
        Mnist.Split split = Mnist.load(MnistFetcher.ensure(dataDir));
        return new TrainTest(split.train(), split.test());
      }
      case "fashion-mnist": {
        Path local = dataDir.resolve("fashion-mnist");
        Path dir = Files.isDirectory(local) ? local : FASHION_MNIST_DEBIAN;
        if (!Files.isDirectory(dir)) {
          throw new DataUnavailableException("Fashion-MNIST not found in " + local + " or " + FASHION_MNIST_DEBIAN
              + ": run 'apt-get install dataset-fashion-mnist' or put the IDX files in " + local);
        }
        Mnist.Split split = Mnist.load(dir);
        return new TrainTest(split.train(), split.test());
      }
      default:
        if (CtrData.isCtr(name)) {
          throw new IllegalArgumentException("dataset '" + name + "' trains a factorization machine (local, submit,"
              + " node); this command trains an MLP, on " + String.join(" or ", NAMES));
        }
        throw new IllegalArgumentException("unknown dataset '" + name + "': expected " + String.join(" or ", NAMES));
    }
  }
}
