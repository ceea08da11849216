package io.shardtrain.compute.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a numeric CSV file into a {@link Dataset}: one column is the label, every other column is
 * a feature. Settings are immutable; each {@code withX} returns a new reader.
 *
 * <p>Defaults: no header, comma-separated, label in the last column, class labels with the class
 * count inferred as the largest label plus one. Blank lines are skipped; fields may be wrapped in
 * double quotes but may not contain the delimiter. Every row must have as many columns as the
 * first. Content errors throw {@link MalformedDataException} naming file, line and column.
 */
public final class CsvReader {
  private final boolean header;
  private final char delimiter;
  private final int labelIndex; // negative counts from the end: -1 is the last column
  private final String labelName; // when set, wins over labelIndex and needs a header
  private final boolean classes;
  private final int numClasses; // 0 = infer

  private CsvReader(boolean header, char delimiter, int labelIndex, String labelName, boolean classes, int numClasses) {
    this.header = header;
    this.delimiter = delimiter;
    this.labelIndex = labelIndex;
    this.labelName = labelName;
    this.classes = classes;
    this.numClasses = numClasses;
  }

  /** A reader with the defaults. */
  public static CsvReader create() {
    return new CsvReader(false, ',', -1, null, true, 0);
  }

  /** Whether the first non-blank line is a header of column names. */
  public CsvReader withHeader(boolean header) {
    return new CsvReader(header, delimiter, labelIndex, labelName, classes, numClasses);
  }

  public CsvReader withDelimiter(char delimiter) {
    return new CsvReader(header, delimiter, labelIndex, labelName, classes, numClasses);
  }

  /** The label column by 0-based index; a negative index counts from the end (-1 = last). */
  public CsvReader withLabelColumn(int index) {
    return new CsvReader(header, delimiter, index, null, classes, numClasses);
  }

  /** The label column by header name; implies a header. */
  public CsvReader withLabelColumn(String name) {
    return new CsvReader(true, delimiter, labelIndex, name, classes, numClasses);
  }

  /** Labels are class ids in {@code [0, numClasses)}; 0 infers the count from the data. */
  public CsvReader withClasses(int numClasses) {
    if (numClasses < 0) throw new IllegalArgumentException("numClasses must not be negative, not " + numClasses);
    return new CsvReader(header, delimiter, labelIndex, labelName, true, numClasses);
  }

  /** Labels are float targets (regression or 0/1 values for a logistic model). */
  public CsvReader withTargets() {
    return new CsvReader(header, delimiter, labelIndex, labelName, false, 0);
  }

  /** Reads the whole file. */
  public Dataset read(Path file) throws IOException {
    GrowableArrays.Floats features = new GrowableArrays.Floats();
    GrowableArrays.Floats targets = new GrowableArrays.Floats();
    GrowableArrays.Ints labels = new GrowableArrays.Ints();
    int columns = -1;
    int label = -1;
    boolean headerPending = header;
    int maxLabel = -1;
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      while ((line = TextLines.next(r, file, lineNo)) != null) {
        lineNo++;
        if (line.isBlank()) continue;
        String[] fields = split(line);
        if (headerPending) {
          headerPending = false;
          columns = fields.length;
          label = resolveLabel(file, lineNo, fields, true);
          continue;
        }
        if (columns < 0) {
          columns = fields.length;
          label = resolveLabel(file, lineNo, fields, false);
        }
        if (fields.length != columns) {
          throw new MalformedDataException(file + ":" + lineNo + ": " + fields.length + " columns, expected "
              + columns);
        }
        for (int c = 0; c < columns; c++) {
          float v = parse(file, lineNo, c, fields[c]);
          if (c != label) {
            features.add(v);
          } else if (!classes) {
            targets.add(v);
          } else {
            if (v < 0 || v != Math.rint(v) || v >= (numClasses > 0 ? numClasses : Dataset.MAX_CLASSES)) {
              throw new MalformedDataException(file + ":" + lineNo + ": label '" + fields[c].strip()
                  + "' is not a class id in [0, " + (numClasses > 0 ? numClasses : Dataset.MAX_CLASSES) + ")");
            }
            labels.add((int) v);
            maxLabel = Math.max(maxLabel, (int) v);
          }
        }
      }
    }
    if (columns < 0 || (classes ? labels.size() : targets.size()) == 0) {
      throw new MalformedDataException(file + ": no data rows");
    }
    int dim = columns - 1;
    if (classes) {
      return Dataset.classification(features.toArray(), dim, labels.toArray(),
          numClasses > 0 ? numClasses : maxLabel + 1);
    }
    return Dataset.withTargets(features.toArray(), dim, targets.toArray());
  }

  /** The label's column index, from the header (by name) or from the first row's width. */
  private int resolveLabel(Path file, int lineNo, String[] fields, boolean isHeader) {
    if (labelName != null) {
      for (int c = 0; c < fields.length; c++) {
        if (unquote(fields[c]).equals(labelName)) return c;
      }
      throw new MalformedDataException(file + ":" + lineNo + ": the header has no column named '" + labelName + "'");
    }
    int c = labelIndex < 0 ? fields.length + labelIndex : labelIndex;
    if (c < 0 || c >= fields.length) {
      throw new MalformedDataException(file + ":" + lineNo + ": label column " + labelIndex + " does not exist in "
          + fields.length + (isHeader ? " header" : "") + " columns");
    }
    return c;
  }

  private String[] split(String line) {
    // split(-1) keeps trailing empty fields, so "1,2," is three columns and fails to parse loudly.
    return line.split(java.util.regex.Pattern.quote(String.valueOf(delimiter)), -1);
  }

  private static String unquote(String s) {
    String t = s.strip();
    if (t.length() >= 2 && t.charAt(0) == '"' && t.charAt(t.length() - 1) == '"') {
      t = t.substring(1, t.length() - 1).strip();
    }
    return t;
  }

  private static float parse(Path file, int lineNo, int column, String raw) {
    String s = unquote(raw);
    float v;
    try {
      v = Float.parseFloat(s);
    } catch (NumberFormatException e) {
      throw new MalformedDataException(file + ":" + lineNo + ": column " + (column + 1) + " value '" + s
          + "' is not a number");
    }
    if (!Float.isFinite(v)) {
      throw new MalformedDataException(file + ":" + lineNo + ": column " + (column + 1) + " value '" + s
          + "' is not finite");
    }
    return v;
  }
}
