package io.shardtrain.samples.local;

import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.compute.data.CriteoReader;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.data.CtrGenerator;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The click-through data sets: {@code ctr}, generated from {@link CtrGenerator}'s planted model
 * (training examples, then test examples from the range right after them), and
 * {@code criteo:PATH}, a Criteo TSV file whose last lines are the test set (its ids hashed into
 * the same id space). {@link #oracleAuc} is the planted model's AUC on the test set (NaN for a file).
 */
public record CtrData(CtrDataset train, CtrDataset test, double oracleAuc) {

  /** Whether {@code dataset} names a click-through data set. */
  public static boolean isCtr(String dataset) {
    return dataset.equals("ctr") || dataset.startsWith("criteo:");
  }

  public static CtrData load(String dataset, CtrSettings s, long seed) throws IOException {
    if (dataset.equals("ctr")) {
      CtrGenerator g = new CtrGenerator(new CtrGenerator.Config(s.fields(), s.vocabulary(), s.hashSpace(),
          s.denseDim(), s.zipf(), s.idWeightStd(), s.denseWeightStd(), s.bias(), seed));
      CtrDataset test = g.generate(s.examples(), (long) s.examples() + s.testExamples());
      return new CtrData(g.generate(s.examples()), test, test.bayesAuc());
    }
    if (dataset.startsWith("criteo:")) {
      String path = dataset.substring("criteo:".length());
      if (path.isBlank()) throw new IllegalArgumentException("--dataset criteo:PATH names no file: give the TSV's path");
      Path file = Path.of(path);
      CtrDataset all = new CriteoReader(s.hashSpace(), s.criteoLimit()).read(file);
      int testSize = (int) Math.round(all.size() * s.criteoTestFraction());
      if (testSize < 1 || testSize >= all.size()) {
        throw new IllegalArgumentException(file + ": " + all.size() + " examples are too few to keep "
            + s.criteoTestFraction() + " of them for testing");
      }
      int cut = all.size() - testSize;
      CtrDataset test = all.slice(cut, all.size());
      requireBothClasses(file, test, s.criteoTestFraction());
      return new CtrData(all.slice(0, cut), test, Double.NaN);
    }
    throw new IllegalArgumentException("'" + dataset + "' is not a click-through data set (ctr or criteo:PATH)");
  }

  /**
   * A warning when the training data's ids use more than half of the id space: values hashed into
   * so full a space share rows often (at half full, about half the distinct values share their row
   * with another), and a shared row learns one weight for values that may click differently.
   */
  public java.util.Optional<String> crowdedIdSpace() {
    int used = train.rowsUsed();
    if (2L * used <= train.hashSpace()) return java.util.Optional.empty();
    return java.util.Optional.of(String.format(java.util.Locale.ROOT, "shardtrain: warning: the training data's ids"
        + " use %d of the id space's %d rows (%.0f%%), so many feature values share a row; a larger"
        + " shardtrain.train.ctr.hash-space keeps them apart", used, train.hashSpace(), 100.0 * used / train.hashSpace()));
  }

  /** A test set of one class has no AUC: every score ranks no click above no non-click. */
  private static void requireBothClasses(Path file, CtrDataset test, double fraction) {
    int clicks = 0;
    for (float label : test.labels()) if (label > 0.5f) clicks++;
    if (clicks == 0 || clicks == test.size()) {
      throw new IllegalArgumentException(file + ": its last " + test.size() + " lines, the test set"
          + " (shardtrain.train.ctr.criteo-test-fraction " + fraction + "), are all " + (clicks == 0 ? "non-clicks"
          : "clicks") + ", so their AUC is undefined; test on more lines or a file whose end has both labels");
    }
  }
}
