package io.shardtrain.compute.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads LibSVM / SVMlight text ({@code label idx:val idx:val ...}, 1-based indices by default)
 * into a dense {@link Dataset}. Settings are immutable; each {@code withX} returns a new reader.
 *
 * <p>The width is given or inferred as the largest index seen. Labels are read as
 * {@link LabelKind#CLASSES} by default. {@code qid:} tokens and {@code #} comments are ignored; a
 * repeated index keeps its last value. Content errors throw {@link MalformedDataException}
 * naming file and line.
 */
public final class LibSvmReader {
  /** How the leading label of each line is read. */
  public enum LabelKind {
    /**
     * Class ids; when the file's labels are all -1 or +1 they become classes 0 and 1, otherwise
     * they must be integers in {@code [0, numClasses)}.
     */
    CLASSES,
    /** Float 0/1 targets for a logistic model; -1 and 0 map to 0, +1 to 1. */
    BINARY,
    /** The label value itself as a float target (regression). */
    TARGETS
  }

  /**
   * Default of {@link #withMaxValues}: 1 GiB of floats. A line of a few bytes ({@code 1 2000000000:1})
   * asks for rows of two billion floats, so the dense size is checked before it is allocated.
   */
  public static final long DEFAULT_MAX_VALUES = 1L << 28;

  private final int dim; // 0 = infer
  private final boolean oneBased;
  private final LabelKind kind;
  private final int numClasses; // 0 = infer
  private final long maxValues;

  private LibSvmReader(int dim, boolean oneBased, LabelKind kind, int numClasses, long maxValues) {
    this.dim = dim;
    this.oneBased = oneBased;
    this.kind = kind;
    this.numClasses = numClasses;
    this.maxValues = maxValues;
  }

  /** A reader with the defaults: inferred dim, 1-based indices, class labels, {@link #DEFAULT_MAX_VALUES}. */
  public static LibSvmReader create() {
    return new LibSvmReader(0, true, LabelKind.CLASSES, 0, DEFAULT_MAX_VALUES);
  }

  /** The most floats of the dense features (rows times width); a file that needs more is refused. */
  public LibSvmReader withMaxValues(long maxValues) {
    if (maxValues < 1) throw new IllegalArgumentException("maxValues must be positive, not " + maxValues);
    return new LibSvmReader(dim, oneBased, kind, numClasses, maxValues);
  }

  /** The feature width; an index beyond it is an error. 0 infers it from the data. */
  public LibSvmReader withDim(int dim) {
    if (dim < 0) throw new IllegalArgumentException("dim must not be negative, not " + dim);
    return new LibSvmReader(dim, oneBased, kind, numClasses, maxValues);
  }

  /** Whether feature indices start at 1 (LibSVM's convention) or at 0. */
  public LibSvmReader withOneBasedIndices(boolean oneBased) {
    return new LibSvmReader(dim, oneBased, kind, numClasses, maxValues);
  }

  public LibSvmReader withLabels(LabelKind kind) {
    return new LibSvmReader(dim, oneBased, kind, numClasses, maxValues);
  }

  /** Class labels with a fixed class count (0 infers it). */
  public LibSvmReader withClasses(int numClasses) {
    if (numClasses < 0) throw new IllegalArgumentException("numClasses must not be negative, not " + numClasses);
    return new LibSvmReader(dim, oneBased, LabelKind.CLASSES, numClasses, maxValues);
  }

  /** Reads the whole file. */
  public Dataset read(Path file) throws IOException {
    GrowableArrays.Ints rowStart = new GrowableArrays.Ints();
    GrowableArrays.Ints lineOf = new GrowableArrays.Ints();
    GrowableArrays.Ints index = new GrowableArrays.Ints();
    GrowableArrays.Floats value = new GrowableArrays.Floats();
    GrowableArrays.Floats rawLabel = new GrowableArrays.Floats();
    int maxIndex = -1;
    int maxIndexLine = 0;
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      while ((line = TextLines.next(r, file, lineNo)) != null) {
        lineNo++;
        int hash = line.indexOf('#');
        String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
        if (content.isEmpty()) continue;
        String[] tokens = content.split("\\s+");
        rowStart.add(index.size());
        lineOf.add(lineNo);
        rawLabel.add(number(file, lineNo, tokens[0], "label"));
        for (int t = 1; t < tokens.length; t++) {
          String tok = tokens[t];
          if (tok.startsWith("qid:")) continue;
          int colon = tok.indexOf(':');
          if (colon <= 0 || colon == tok.length() - 1) {
            throw new MalformedDataException(file + ":" + lineNo + ": '" + tok + "' is not index:value");
          }
          int idx;
          try {
            idx = Integer.parseInt(tok.substring(0, colon));
          } catch (NumberFormatException e) {
            throw new MalformedDataException(file + ":" + lineNo + ": index '" + tok.substring(0, colon)
                + "' is not an integer");
          }
          int col = oneBased ? idx - 1 : idx;
          if (col < 0) {
            throw new MalformedDataException(file + ":" + lineNo + ": index " + idx + " is below "
                + (oneBased ? "1 (indices are 1-based)" : "0"));
          }
          if (dim > 0 && col >= dim) {
            throw new MalformedDataException(file + ":" + lineNo + ": index " + idx + " is beyond dim " + dim);
          }
          index.add(col);
          value.add(number(file, lineNo, tok.substring(colon + 1), "value"));
          if (col > maxIndex) {
            maxIndex = col;
            maxIndexLine = lineNo;
          }
        }
      }
    }
    int n = rowStart.size();
    if (n == 0) {
      throw new MalformedDataException(file + ": no data lines");
    }
    int width = dim > 0 ? dim : maxIndex + 1;
    long values = (long) n * width;
    if (values > Math.min(maxValues, Integer.MAX_VALUE - 8)) {
      String where = dim > 0 ? file + ": " : file + ":" + maxIndexLine + ": index " + (oneBased ? maxIndex + 1 : maxIndex)
          + " makes the width " + width + ", and ";
      throw new MalformedDataException(where + n + " rows of width " + width + " are " + values
          + " dense values, more than the limit of " + Math.min(maxValues, Integer.MAX_VALUE - 8) + " (withMaxValues)");
    }
    float[] features = new float[n * width];
    for (int i = 0; i < n; i++) {
      int end = i + 1 < n ? rowStart.get(i + 1) : index.size();
      for (int k = rowStart.get(i); k < end; k++) {
        features[i * width + index.get(k)] = value.get(k);
      }
    }
    switch (kind) {
      case TARGETS:
        return Dataset.withTargets(features, width, rawLabel.toArray());
      case BINARY: {
        float[] t = new float[n];
        for (int i = 0; i < n; i++) {
          float y = rawLabel.get(i);
          if (y != -1f && y != 0f && y != 1f) {
            throw new MalformedDataException(file + ":" + lineOf.get(i) + ": label " + y
                + " is not a binary label (-1, 0 or +1)");
          }
          t[i] = y > 0 ? 1f : 0f;
        }
        return Dataset.withTargets(features, width, t);
      }
      default: {
        boolean plusMinus = true;
        for (int i = 0; i < n; i++) {
          float y = rawLabel.get(i);
          if (y != -1f && y != 1f) plusMinus = false;
        }
        int[] labels = new int[n];
        int maxLabel = 0;
        for (int i = 0; i < n; i++) {
          float y = rawLabel.get(i);
          int c = plusMinus ? (y > 0 ? 1 : 0) : (int) y;
          int bound = numClasses > 0 ? numClasses : Dataset.MAX_CLASSES;
          if (!plusMinus && (y < 0 || y != Math.rint(y) || y >= bound)) {
            throw new MalformedDataException(file + ":" + lineOf.get(i) + ": label " + y + " is not a class id in [0, "
                + bound + ")");
          }
          labels[i] = c;
          maxLabel = Math.max(maxLabel, c);
        }
        int classes = numClasses > 0 ? numClasses : Math.max(plusMinus ? 2 : 1, maxLabel + 1);
        return Dataset.classification(features, width, labels, classes);
      }
    }
  }

  private static float number(Path file, int lineNo, String s, String what) {
    float v;
    try {
      v = Float.parseFloat(s);
    } catch (NumberFormatException e) {
      throw new MalformedDataException(file + ":" + lineNo + ": " + what + " '" + s + "' is not a number");
    }
    if (!Float.isFinite(v)) {
      throw new MalformedDataException(file + ":" + lineNo + ": " + what + " '" + s + "' is not finite");
    }
    return v;
  }
}
