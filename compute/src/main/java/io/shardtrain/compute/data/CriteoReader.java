package io.shardtrain.compute.data;

import io.shardtrain.compute.sparse.RowHash;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads the Criteo display-advertising TSV format into a {@link CtrDataset}: per line a 0/1 label,
 * {@value #INTEGER_FEATURES} integer features and {@value #CATEGORICAL_FEATURES} categorical
 * features given as hexadecimal strings, tab-separated; any feature may be empty.
 *
 * <p>Integer feature {@code v} becomes the dense value {@code sign(v) * ln(1 + |v|)} (counts in the
 * data span many orders of magnitude; some are negative), empty becomes 0. Categorical field
 * {@code f} with value {@code h} becomes the sparse id {@code hash(f, h) mod hashSpace}; an empty
 * one gets its field's own "missing" id, so absence is a feature too. Ids are a function of
 * (field, value, hashSpace) only, so every reader of any part of the data agrees on them.
 * The whole file is read and checked before a data set is returned: a line with the wrong number
 * of fields, a bad label, number or hex string throws {@link MalformedDataException} naming file
 * and line, and nothing is returned. The true click probabilities are unknown: NaN.
 */
public final class CriteoReader {
  public static final int INTEGER_FEATURES = 13;
  public static final int CATEGORICAL_FEATURES = 26;
  static final int COLUMNS = 1 + INTEGER_FEATURES + CATEGORICAL_FEATURES;
  private final int hashSpace;
  private final int limit;

  /** A reader hashing into {@code [0, hashSpace)}; {@code limit} > 0 stops after that many examples. */
  public CriteoReader(int hashSpace, int limit) {
    if (hashSpace < 1) throw new IllegalArgumentException("hash space must be >= 1, not " + hashSpace);
    if (limit < 0) throw new IllegalArgumentException("example limit must be >= 0 (0: all), not " + limit);
    this.hashSpace = hashSpace;
    this.limit = limit;
  }

  /** The sparse id of categorical field {@code field}'s hexadecimal value ({@code null}: empty). */
  public static int categoricalId(int field, String hex, int hashSpace) {
    long fieldSalt = (field + 1) * 0x9E3779B97F4A7C15L;
    // A value and "missing" go through different mixes, so they meet only as any two ids may collide.
    long h = hex == null ? RowHash.mix(fieldSalt ^ 0x5A5A5A5A5A5A5A5AL)
        : RowHash.mix(RowHash.mix(Long.parseUnsignedLong(hex, 16) ^ 0xC417E0C417E0L) + fieldSalt);
    return (int) Long.remainderUnsigned(h, hashSpace);
  }

  /** Reads the examples of the Criteo TSV {@code file}; a directory, or a line not of that format, is refused naming it. */
  public CtrDataset read(Path file) throws IOException {
    if (Files.isDirectory(file)) {
      throw new IllegalArgumentException(file + " is a directory, not a Criteo TSV file");
    }
    GrowableArrays.Ints ids = new GrowableArrays.Ints();
    GrowableArrays.Floats dense = new GrowableArrays.Floats();
    GrowableArrays.Floats labels = new GrowableArrays.Floats();
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      String[] cols = new String[COLUMNS];
      while ((line = TextLines.next(r, file, lineNo)) != null && (limit == 0 || labels.size() < limit)) {
        lineNo++;
        if (line.isEmpty()) continue;
        int count = split(line, cols);
        if (count != COLUMNS) {
          throw new MalformedDataException(file + ":" + lineNo + ": " + count + " tab-separated fields, expected "
              + COLUMNS + " (label, " + INTEGER_FEATURES + " integer, " + CATEGORICAL_FEATURES + " categorical)");
        }
        if (!cols[0].equals("0") && !cols[0].equals("1")) {
          throw new MalformedDataException(file + ":" + lineNo + ": label '" + cols[0] + "' is not 0 or 1");
        }
        labels.add(cols[0].equals("1") ? 1f : 0f);
        for (int j = 0; j < INTEGER_FEATURES; j++) {
          String s = cols[1 + j];
          if (s.isEmpty()) {
            dense.add(0f);
            continue;
          }
          long v;
          try {
            v = Long.parseLong(s);
          } catch (NumberFormatException e) {
            throw new MalformedDataException(file + ":" + lineNo + ": integer feature " + (j + 1) + " '" + s
                + "' is not an integer");
          }
          dense.add((float) (Math.signum(v) * Math.log1p(Math.abs((double) v))));
        }
        for (int f = 0; f < CATEGORICAL_FEATURES; f++) {
          String s = cols[1 + INTEGER_FEATURES + f];
          if (!s.isEmpty() && (s.length() > 16 || !isHex(s))) {
            throw new MalformedDataException(file + ":" + lineNo + ": categorical feature " + (f + 1) + " '" + s
                + "' is not a hexadecimal value of at most 16 digits");
          }
          ids.add(categoricalId(f, s.isEmpty() ? null : s, hashSpace));
        }
      }
    }
    int n = labels.size();
    if (n == 0) throw new MalformedDataException(file + ": no data lines");
    float[] probs = new float[n];
    Arrays.fill(probs, Float.NaN);
    return new CtrDataset(CATEGORICAL_FEATURES, INTEGER_FEATURES, hashSpace, ids.toArray(), dense.toArray(),
        labels.toArray(), probs);
  }

  // Splits on tabs into cols; returns the field count (which may exceed cols.length).
  private static int split(String line, String[] cols) {
    int count = 0;
    int start = 0;
    while (true) {
      int tab = line.indexOf('\t', start);
      int end = tab < 0 ? line.length() : tab;
      if (count < cols.length) cols[count] = line.substring(start, end);
      count++;
      if (tab < 0) return count;
      start = tab + 1;
    }
  }

  private static boolean isHex(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
    }
    return true;
  }
}
