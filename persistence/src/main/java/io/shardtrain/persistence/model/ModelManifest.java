package io.shardtrain.persistence.model;

import io.shardtrain.compute.Tensor;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The contents of a model directory's {@code manifest.json} (docs/MODEL-FORMAT.md): format name and
 * version, description, model version, creation time, one {@link Entry} per parameter file and
 * one {@link TableEntry} per sparse table (absent from a model without tables).
 *
 * <p>{@link #parse} accepts exactly format {@value #FORMAT} version {@value #FORMAT_VERSION}, ignores
 * unknown fields (later minor additions), and rejects anything malformed with a message naming the
 * field.
 */
public record ModelManifest(int formatVersion, Map<String, String> description, long version,
    Instant createdAt, List<Entry> parameters, List<TableEntry> tables) {
  public static final String FORMAT = "shardtrain-model";
  public static final int FORMAT_VERSION = 1;
  public static final String DTYPE = "float32";
  public static final String BYTE_ORDER = "little";
  /** The type of a table's ids. */
  public static final String ID_DTYPE = "int64";

  /** One parameter: its name, shape, file in the model directory, byte length and SHA-256. */
  public record Entry(String name, int[] shape, String file, long bytes, String sha256) {
    public Entry {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(shape, "shape");
      Objects.requireNonNull(file, "file");
      Objects.requireNonNull(sha256, "sha256");
      shape = shape.clone();
    }

    /** Number of float32 values the shape holds. */
    public long count() {
      return Tensor.elementCount(shape);
    }

    @Override
    public int[] shape() {
      return shape.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e && name.equals(e.name) && java.util.Arrays.equals(shape, e.shape)
          && file.equals(e.file) && bytes == e.bytes && sha256.equals(e.sha256);
    }

    @Override
    public int hashCode() {
      return Objects.hash(name, java.util.Arrays.hashCode(shape), file, bytes, sha256);
    }

    @Override
    public String toString() {
      return name + Tensor.shapeString(shape) + " in " + file;
    }
  }

  /**
   * One sparse table: its name, row width, rows stored, and its two files: the rows' ids (int64,
   * ascending) and their values (float32, row after row), each with its byte length and SHA-256.
   */
  public record TableEntry(String name, int dim, long rows, String idsFile, long idsBytes, String idsSha256,
      String valuesFile, long valuesBytes, String valuesSha256) {
    public TableEntry {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(idsFile, "idsFile");
      Objects.requireNonNull(idsSha256, "idsSha256");
      Objects.requireNonNull(valuesFile, "valuesFile");
      Objects.requireNonNull(valuesSha256, "valuesSha256");
    }
  }

  /** A manifest of dense parameters only. */
  public ModelManifest(int formatVersion, Map<String, String> description, long version, Instant createdAt,
      List<Entry> parameters) {
    this(formatVersion, description, version, createdAt, parameters, List.of());
  }

  public ModelManifest {
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(createdAt, "createdAt");
    description = Collections.unmodifiableMap(new LinkedHashMap<>(description));
    parameters = List.copyOf(parameters);
    tables = List.copyOf(tables);
  }

  /** The manifest as pretty-printed JSON, fields in the documented order, ending in a newline. */
  public String toJson() {
    StringBuilder b = new StringBuilder("{\n");
    b.append("  \"format\": ").append(Json.quote(FORMAT)).append(",\n");
    b.append("  \"formatVersion\": ").append(formatVersion).append(",\n");
    b.append("  \"version\": ").append(version).append(",\n");
    b.append("  \"createdAt\": ").append(Json.quote(createdAt.toString())).append(",\n");
    b.append("  \"description\": {");
    int i = 0;
    for (Map.Entry<String, String> e : description.entrySet()) {
      b.append(i++ == 0 ? "\n" : ",\n");
      b.append("    ").append(Json.quote(e.getKey())).append(": ").append(Json.quote(e.getValue()));
    }
    b.append(description.isEmpty() ? "},\n" : "\n  },\n");
    b.append("  \"parameters\": [");
    i = 0;
    for (Entry p : parameters) {
      b.append(i++ == 0 ? "\n" : ",\n");
      b.append("    {\"name\": ").append(Json.quote(p.name()));
      b.append(", \"shape\": [");
      int[] shape = p.shape;
      for (int k = 0; k < shape.length; k++) b.append(k == 0 ? "" : ", ").append(shape[k]);
      b.append("], \"dtype\": ").append(Json.quote(DTYPE));
      b.append(", \"byteOrder\": ").append(Json.quote(BYTE_ORDER));
      b.append(", \"file\": ").append(Json.quote(p.file()));
      b.append(", \"bytes\": ").append(p.bytes());
      b.append(", \"sha256\": ").append(Json.quote(p.sha256())).append('}');
    }
    b.append(parameters.isEmpty() ? "]" : "\n  ]");
    if (!tables.isEmpty()) {
      b.append(",\n  \"tables\": [");
      i = 0;
      for (TableEntry t : tables) {
        b.append(i++ == 0 ? "\n" : ",\n");
        b.append("    {\"name\": ").append(Json.quote(t.name()));
        b.append(", \"dim\": ").append(t.dim());
        b.append(", \"rows\": ").append(t.rows());
        b.append(", \"ids\": {\"file\": ").append(Json.quote(t.idsFile()));
        b.append(", \"dtype\": ").append(Json.quote(ID_DTYPE));
        b.append(", \"bytes\": ").append(t.idsBytes());
        b.append(", \"sha256\": ").append(Json.quote(t.idsSha256())).append('}');
        b.append(", \"values\": {\"file\": ").append(Json.quote(t.valuesFile()));
        b.append(", \"dtype\": ").append(Json.quote(DTYPE));
        b.append(", \"bytes\": ").append(t.valuesBytes());
        b.append(", \"sha256\": ").append(Json.quote(t.valuesSha256())).append("}}");
      }
      b.append("\n  ]");
    }
    return b.append("\n}\n").toString();
  }

  /**
   * Reads a manifest from its JSON text. {@code source} names the file in error messages.
   *
   * @throws IllegalArgumentException naming {@code source} and the problem: bad JSON, a wrong or
   *     missing field, another format, an unsupported format version
   */
  public static ModelManifest parse(String json, String source) {
    Object root;
    try {
      root = Json.parse(json);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + " is not valid JSON: " + e.getMessage(), e);
    }
    Fields top = new Fields(source, "", asObject(root, source, "the manifest"));
    String format = top.string("format");
    if (!format.equals(FORMAT)) {
      throw new IllegalArgumentException(source + " has format \"" + format + "\", expected \""
          + FORMAT + "\"");
    }
    long formatVersion = top.integer("formatVersion");
    if (formatVersion != FORMAT_VERSION) {
      throw new IllegalArgumentException(source + " has format version " + formatVersion
          + ", this reader supports version " + FORMAT_VERSION + " only");
    }
    long version = top.integer("version");
    String created = top.string("createdAt");
    Instant createdAt;
    try {
      createdAt = Instant.parse(created);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(source + ": createdAt \"" + created
          + "\" is not an ISO-8601 UTC instant such as 2024-05-01T12:00:00Z", e);
    }
    Map<String, String> description = new LinkedHashMap<>();
    top.object("description").forEach((k, v) -> {
      if (!(v instanceof String s)) {
        throw new IllegalArgumentException(source + ": description." + k
            + " must be a string, got " + v);
      }
      description.put(k, s);
    });
    List<Entry> entries = new ArrayList<>();
    List<Object> list = top.array("parameters");
    for (int i = 0; i < list.size(); i++) {
      String where = "parameters[" + i + "].";
      Fields f = new Fields(source, where, asObject(list.get(i), source, where));
      String name = f.string("name");
      if (name.isEmpty()) throw new IllegalArgumentException(source + ": " + where + "name is empty");
      List<Object> dims = f.array("shape");
      if (dims.isEmpty()) {
        throw new IllegalArgumentException(source + ": " + where + "shape is empty, expected rank 1+");
      }
      int[] shape = new int[dims.size()];
      for (int k = 0; k < shape.length; k++) {
        long d = Fields.integerValue(dims.get(k), source, where + "shape[" + k + "]");
        if (d < 0 || d > Integer.MAX_VALUE) {
          throw new IllegalArgumentException(source + ": " + where + "shape[" + k + "] is " + d
              + ", expected 0.." + Integer.MAX_VALUE);
        }
        shape[k] = (int) d;
      }
      String dtype = f.string("dtype");
      if (!dtype.equals(DTYPE)) {
        throw new IllegalArgumentException(source + ": " + where + "dtype is \"" + dtype
            + "\", this reader supports \"" + DTYPE + "\" only");
      }
      String order = f.string("byteOrder");
      if (!order.equals(BYTE_ORDER)) {
        throw new IllegalArgumentException(source + ": " + where + "byteOrder is \"" + order
            + "\", this reader supports \"" + BYTE_ORDER + "\" only");
      }
      String file = plainFile(source, where, f.string("file"));
      long bytes = f.integer("bytes");
      Entry e = new Entry(name, shape, file, bytes, f.string("sha256"));
      if (e.count() > Integer.MAX_VALUE || bytes != 4 * e.count()) {
        throw new IllegalArgumentException(source + ": " + where + "bytes is " + bytes
            + " but shape " + Tensor.shapeString(shape) + " of float32 needs "
            + (e.count() > Integer.MAX_VALUE ? "more than an array holds" : String.valueOf(4 * e.count())));
      }
      sha256(source, where, e.sha256());
      for (Entry prev : entries) {
        if (prev.name().equals(name)) {
          throw new IllegalArgumentException(source + ": parameter " + name + " is listed twice");
        }
        if (prev.file().equals(file)) {
          throw new IllegalArgumentException(source + ": file " + file + " is listed twice");
        }
      }
      entries.add(e);
    }
    List<TableEntry> tables = new ArrayList<>();
    List<Object> tableList = top.map().containsKey("tables") ? top.array("tables") : List.of();
    for (int i = 0; i < tableList.size(); i++) {
      TableEntry t = table(source, "tables[" + i + "].", tableList.get(i));
      for (Entry p : entries) {
        if (p.name().equals(t.name())) throw new IllegalArgumentException(source + ": " + t.name() + " is a parameter and a table");
        if (p.file().equals(t.idsFile()) || p.file().equals(t.valuesFile())) {
          throw new IllegalArgumentException(source + ": file " + p.file() + " is listed twice");
        }
      }
      for (TableEntry prev : tables) {
        if (prev.name().equals(t.name())) throw new IllegalArgumentException(source + ": table " + t.name() + " is listed twice");
      }
      tables.add(t);
    }
    return new ModelManifest((int) formatVersion, description, version, createdAt, entries, tables);
  }

  /** One entry of {@code tables}, checked: a name, a row width, and two files whose lengths fit the rows. */
  private static TableEntry table(String source, String where, Object json) {
    Fields f = new Fields(source, where, asObject(json, source, where));
    String name = f.string("name");
    if (name.isEmpty()) throw new IllegalArgumentException(source + ": " + where + "name is empty");
    long dim = f.integer("dim");
    long rows = f.integer("rows");
    if (dim < 1 || dim > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(source + ": " + where + "dim is " + dim + ", expected 1.." + Integer.MAX_VALUE);
    }
    if (rows < 0 || rows * dim > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(source + ": " + where + "rows is " + rows + ", expected 0 to as many as an array"
          + " of " + dim + " values a row holds");
    }
    TableFile ids = file(source, where + "ids.", f.object("ids"), ID_DTYPE, 8 * rows);
    TableFile values = file(source, where + "values.", f.object("values"), DTYPE, 4 * rows * dim);
    if (ids.file().equals(values.file())) {
      throw new IllegalArgumentException(source + ": file " + ids.file() + " is listed twice");
    }
    return new TableEntry(name, (int) dim, rows, ids.file(), 8 * rows, ids.sha256(), values.file(), 4 * rows * dim,
        values.sha256());
  }

  private record TableFile(String file, String sha256) {}

  /** A table's file, checked for its name, its type and its length {@code bytes}. */
  private static TableFile file(String source, String where, Map<String, Object> json, String dtype, long bytes) {
    Fields f = new Fields(source, where, json);
    String file = plainFile(source, where, f.string("file"));
    if (!f.string("dtype").equals(dtype)) {
      throw new IllegalArgumentException(source + ": " + where + "dtype is \"" + f.string("dtype") + "\", expected \""
          + dtype + "\"");
    }
    if (f.integer("bytes") != bytes) {
      throw new IllegalArgumentException(source + ": " + where + "bytes is " + f.integer("bytes") + " but the table's rows"
          + " need " + bytes);
    }
    return new TableFile(file, sha256(source, where, f.string("sha256")));
  }

  /** {@code file}, refused unless it is a plain file name inside the model directory (field {@code where + "file"}). */
  private static String plainFile(String source, String where, String file) {
    if (!FileNames.isPlainFileName(file)) {
      throw new IllegalArgumentException(source + ": " + where + "file \"" + file
          + "\" is not a plain file name inside the model directory");
    }
    return file;
  }

  /** {@code sha}, refused unless it is 64 lower-case hex digits (field {@code where + "sha256"}). */
  private static String sha256(String source, String where, String sha) {
    if (!sha.matches("[0-9a-f]{64}")) {
      throw new IllegalArgumentException(source + ": " + where + "sha256 \"" + sha + "\" is not 64 lower-case hex digits");
    }
    return sha;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asObject(Object v, String source, String where) {
    if (!(v instanceof Map)) {
      throw new IllegalArgumentException(source + ": " + where + " must be a JSON object");
    }
    return (Map<String, Object>) v;
  }

  /** Typed access to one JSON object's fields with errors that name the field path. */
  private record Fields(String source, String prefix, Map<String, Object> map) {
    private Object get(String key) {
      Object v = map.get(key);
      if (v == null) {
        throw new IllegalArgumentException(source + " lacks the field " + prefix + key);
      }
      return v;
    }

    String string(String key) {
      Object v = get(key);
      if (!(v instanceof String s)) {
        throw new IllegalArgumentException(source + ": " + prefix + key + " must be a string, got "
            + v);
      }
      return s;
    }

    long integer(String key) {
      return integerValue(get(key), source, prefix + key);
    }

    static long integerValue(Object v, String source, String what) {
      if (v instanceof BigDecimal n) {
        try {
          return n.longValueExact();
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException(source + ": " + what + " must be a 64-bit integer, got "
              + n, e);
        }
      }
      throw new IllegalArgumentException(source + ": " + what + " must be an integer, got " + v);
    }

    @SuppressWarnings("unchecked")
    List<Object> array(String key) {
      Object v = get(key);
      if (!(v instanceof List)) {
        throw new IllegalArgumentException(source + ": " + prefix + key + " must be a JSON array");
      }
      return (List<Object>) v;
    }

    Map<String, Object> object(String key) {
      return asObject(get(key), source, prefix + key);
    }
  }
}
