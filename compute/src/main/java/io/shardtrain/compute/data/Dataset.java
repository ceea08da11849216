package io.shardtrain.compute.data;

import java.util.Arrays;

/**
 * An in-memory set of {@code n} examples: dense float features of width {@link #dim()} in one
 * row-major array, and either integer class labels (classification) or float targets (regression,
 * or 0/1 labels for logistic models).
 *
 * <p>Instances are immutable views: {@link #slice} shares the arrays of its parent, so cutting a
 * dataset into data tasks costs nothing. The factories take ownership of the arrays they are given;
 * callers must not change them afterwards.
 */
public final class Dataset {
  private final float[] features;
  private final int dim;
  private final int base; // first example of this view inside the backing arrays
  private final int n;
  private final int[] labels; // null unless classification
  private final int numClasses;
  private final float[] targets; // null when classification

  private Dataset(float[] features, int dim, int base, int n, int[] labels, int numClasses, float[] targets) {
    this.features = features;
    this.dim = dim;
    this.base = base;
    this.n = n;
    this.labels = labels;
    this.numClasses = numClasses;
    this.targets = targets;
  }

  /**
   * Most classes a reader infers from class ids in a file: ids arrive as floats, which hold
   * integers exactly only up to 2^24, and a larger id would only make an absurd output layer.
   */
  public static final int MAX_CLASSES = 1 << 24;

  /**
   * A classification dataset: {@code features.length == labels.length * dim} and every label in
   * {@code [0, numClasses)}.
   */
  public static Dataset classification(float[] features, int dim, int[] labels, int numClasses) {
    if (numClasses < 1) {
      throw new IllegalArgumentException("numClasses must be at least 1, not " + numClasses);
    }
    checkFeatures(features, dim, labels.length);
    for (int i = 0; i < labels.length; i++) {
      if (labels[i] < 0 || labels[i] >= numClasses) {
        throw new IllegalArgumentException(
            "label " + labels[i] + " of example " + i + " is outside [0, " + numClasses + ")");
      }
    }
    return new Dataset(features, dim, 0, labels.length, labels, numClasses, null);
  }

  /** A dataset with one float target per example (regression, or 0/1 labels for binary models). */
  public static Dataset withTargets(float[] features, int dim, float[] targets) {
    checkFeatures(features, dim, targets.length);
    return new Dataset(features, dim, 0, targets.length, null, 0, targets);
  }

  private static void checkFeatures(float[] features, int dim, int n) {
    if (dim < 0) {
      throw new IllegalArgumentException("dim must not be negative, not " + dim);
    }
    if ((long) n * dim != features.length) {
      throw new IllegalArgumentException(
          "features of length " + features.length + " do not hold " + n + " examples of dim " + dim);
    }
  }

  /** Number of examples. */
  public int size() {
    return n;
  }

  /** Number of features per example. */
  public int dim() {
    return dim;
  }

  /** Number of classes, or 0 when this dataset carries float targets instead of class labels. */
  public int numClasses() {
    return numClasses;
  }

  public boolean isClassification() {
    return labels != null;
  }

  /** Feature {@code j} of example {@code i}. */
  public float feature(int i, int j) {
    checkIndex(i);
    if (j < 0 || j >= dim) {
      throw new IllegalArgumentException("feature " + j + " is outside [0, " + dim + ")");
    }
    return features[(base + i) * dim + j];
  }

  /** The class label of example {@code i}; only for classification datasets. */
  public int label(int i) {
    requireClassification();
    checkIndex(i);
    return labels[base + i];
  }

  /** The target of example {@code i}; for a classification dataset, its class label as a float. */
  public float target(int i) {
    checkIndex(i);
    return labels != null ? labels[base + i] : targets[base + i];
  }

  /**
   * Copies the feature rows of {@code indices[from, from+count)}, in that order, into
   * {@code dst[0, count*dim)}.
   */
  public void copyFeatures(int[] indices, int from, int count, float[] dst) {
    copyFeatureColumns(indices, from, count, 0, dim, dst);
  }

  /**
   * Copies columns {@code [c0, c1)} of the feature rows of {@code indices[from, from+count)}, in that
   * order, into the same columns of {@code dst}'s rows (row k from {@code k*dim}): one thread's share
   * of a batch whose columns several threads copy, each the columns it reads.
   */
  public void copyFeatureColumns(int[] indices, int from, int count, int c0, int c1, float[] dst) {
    if (c0 < 0 || c1 > dim || c0 > c1) {
      throw new IllegalArgumentException("columns [" + c0 + ", " + c1 + ") of rows of dim " + dim);
    }
    checkRange(indices, from, count);
    if ((long) count * dim > dst.length) {
      throw new IllegalArgumentException(
          "destination of length " + dst.length + " cannot hold " + count + " rows of dim " + dim);
    }
    for (int k = 0; k < count; k++) {
      int i = indices[from + k];
      checkIndex(i);
      System.arraycopy(features, (base + i) * dim + c0, dst, k * dim + c0, c1 - c0);
    }
  }

  /** Copies the class labels of {@code indices[from, from+count)} into {@code dst[0, count)}. */
  public void copyLabels(int[] indices, int from, int count, int[] dst) {
    requireClassification();
    checkRange(indices, from, count);
    checkDst(dst.length, count);
    for (int k = 0; k < count; k++) {
      int i = indices[from + k];
      checkIndex(i);
      dst[k] = labels[base + i];
    }
  }

  /** Copies the targets of {@code indices[from, from+count)} into {@code dst[0, count)}. */
  public void copyTargets(int[] indices, int from, int count, float[] dst) {
    checkRange(indices, from, count);
    checkDst(dst.length, count);
    for (int k = 0; k < count; k++) {
      int i = indices[from + k];
      checkIndex(i);
      dst[k] = labels != null ? labels[base + i] : targets[base + i];
    }
  }

  /** A view of examples {@code [from, to)}; shares the backing arrays, copies nothing. */
  public Dataset slice(int from, int to) {
    if (from < 0 || to > n || from > to) {
      throw new IllegalArgumentException("slice [" + from + ", " + to + ") is outside [0, " + n + ")");
    }
    return new Dataset(features, dim, base + from, to - from, labels, numClasses, targets);
  }

  /**
   * A new dataset holding the examples of {@code parts} one after another (copies). All parts must
   * have the same dim and the same kind of labels; the class count is the largest of the parts.
   */
  public static Dataset concat(Dataset... parts) {
    if (parts.length == 0) {
      throw new IllegalArgumentException("concat needs at least one dataset");
    }
    Dataset first = parts[0];
    long total = 0;
    int classes = 0;
    for (Dataset p : parts) {
      if (p.dim != first.dim || p.isClassification() != first.isClassification()) {
        throw new IllegalArgumentException("cannot concat a dataset of dim " + p.dim
            + (p.isClassification() ? " with class labels" : " with targets") + " to one of dim " + first.dim
            + (first.isClassification() ? " with class labels" : " with targets"));
      }
      total += p.n;
      classes = Math.max(classes, p.numClasses);
    }
    if (total * Math.max(1, first.dim) > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("concatenation of " + total + " examples is too large for one array");
    }
    int size = (int) total;
    float[] f = new float[size * first.dim];
    int[] l = first.isClassification() ? new int[size] : null;
    float[] t = first.isClassification() ? null : new float[size];
    int at = 0;
    for (Dataset p : parts) {
      System.arraycopy(p.features, p.base * p.dim, f, at * first.dim, p.n * p.dim);
      if (l != null) System.arraycopy(p.labels, p.base, l, at, p.n);
      else System.arraycopy(p.targets, p.base, t, at, p.n);
      at += p.n;
    }
    return new Dataset(f, first.dim, 0, size, l, classes, t);
  }

  private void requireClassification() {
    if (labels == null) {
      throw new IllegalStateException("this dataset has float targets, not class labels");
    }
  }

  private void checkIndex(int i) {
    if (i < 0 || i >= n) {
      throw new IllegalArgumentException("example index " + i + " is outside [0, " + n + ")");
    }
  }

  private static void checkRange(int[] indices, int from, int count) {
    if (from < 0 || count < 0 || from > indices.length - count) {
      throw new IllegalArgumentException(
          "range [" + from + ", " + (from + count) + ") is outside an index array of length " + indices.length);
    }
  }

  private static void checkDst(int length, int count) {
    if (length < count) {
      throw new IllegalArgumentException("destination of length " + length + " cannot hold " + count + " values");
    }
  }

  @Override
  public String toString() {
    return "Dataset[n=" + n + ", dim=" + dim
        + (labels != null ? ", classes=" + numClasses : ", targets") + "]";
  }

  /** For tests and debugging: the features of example {@code i} as a new array. */
  public float[] row(int i) {
    checkIndex(i);
    return Arrays.copyOfRange(features, (base + i) * dim, (base + i + 1) * dim);
  }
}
