package io.shardtrain.persistence.model;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Saves and loads {@link Checkpoint}s: a model directory (docs/MODEL-FORMAT.md) with, beside the
 * manifest, one raw float32 file per optimizer slot and a {@code checkpoint.json} naming them
 * (with length and SHA-256) and holding the step and the reader offsets. A checkpoint is
 * therefore also a model that {@code --init-from} loads; old model readers ignore the extra files.
 * Written in one atomic rename, like a model.
 */
public final class CheckpointFiles {
  /** The checkpoint description beside the manifest. */
  public static final String FILE = "checkpoint.json";
  public static final String FORMAT = "shardtrain-checkpoint";
  public static final int FORMAT_VERSION = 1;

  private CheckpointFiles() {}

  /** Writes {@code checkpoint} to {@code dir}, replacing an existing directory as {@code ifExists} says. */
  public static void save(Path dir, Checkpoint checkpoint, ModelFiles.IfExists ifExists) throws IOException {
    Map<String, String> names = ModelFiles.fileNames(checkpoint.model());
    ModelFiles.save(dir, checkpoint.model(), ifExists, tmp -> {
      StringBuilder b = new StringBuilder("{\n");
      b.append("  \"format\": ").append(Json.quote(FORMAT)).append(",\n");
      b.append("  \"formatVersion\": ").append(FORMAT_VERSION).append(",\n");
      b.append("  \"step\": ").append(checkpoint.step()).append(",\n");
      b.append("  \"epochsDone\": ").append(checkpoint.epochsDone()).append(",\n");
      b.append("  \"slots\": [");
      int i = 0;
      for (Checkpoint.Slots s : checkpoint.slots()) {
        String base = names.get(s.parameter());
        if (base == null) throw new IllegalArgumentException("optimizer slots for unknown parameter " + s.parameter());
        base = base.substring(0, base.length() - ModelFiles.VALUES_EXTENSION.length());
        b.append(i++ == 0 ? "\n" : ",\n");
        b.append("    {\"parameter\": ").append(Json.quote(s.parameter())).append(", \"updates\": ")
            .append(s.updates());
        if (s.examples() >= 0) b.append(", \"examples\": ").append(s.examples());
        b.append(", \"files\": [");
        for (int k = 0; k < s.values().size(); k++) {
          String file = base + ".slot" + k + ModelFiles.VALUES_EXTENSION;
          float[] v = s.values().get(k);
          String sha = ModelFiles.writeValues(tmp.resolve(file), v);
          b.append(k == 0 ? "" : ", ").append("{\"file\": ").append(Json.quote(file)).append(", \"bytes\": ")
              .append(4L * v.length).append(", \"sha256\": ").append(Json.quote(sha)).append('}');
        }
        b.append("]}");
      }
      b.append(checkpoint.slots().isEmpty() ? "],\n" : "\n  ],\n");
      b.append("  \"readerOffsets\": [");
      i = 0;
      for (Checkpoint.ReaderOffset r : checkpoint.readerOffsets()) {
        b.append(i++ == 0 ? "\n" : ",\n");
        b.append("    {\"epoch\": ").append(r.epoch()).append(", \"task\": ").append(r.task())
            .append(", \"offset\": ").append(r.offset()).append('}');
      }
      b.append(checkpoint.readerOffsets().isEmpty() ? "]\n" : "\n  ]\n").append("}\n");
      Files.writeString(tmp.resolve(FILE), b.toString(), StandardCharsets.UTF_8);
    });
  }

  /** Whether {@code dir} holds a checkpoint (not just a model). */
  public static boolean isCheckpoint(Path dir) {
    return Files.isRegularFile(dir.resolve(FILE));
  }

  /**
   * Refuses {@code dir}, a model's directory, unless it holds a checkpoint's file too: what
   * {@link #load} checks first, without reading the values.
   */
  public static void requireCheckpoint(Path dir) {
    if (!isCheckpoint(dir)) throw notACheckpoint(dir);
  }

  private static IllegalArgumentException notACheckpoint(Path dir) {
    return new IllegalArgumentException(dir + " is a model but not a checkpoint: it has no " + FILE);
  }

  /** Loads the checkpoint in {@code dir}, checking every file's length and SHA-256 as {@link ModelFiles#load} does. */
  public static Checkpoint load(Path dir) throws IOException {
    ModelSnapshot model = ModelFiles.load(dir);
    Path file = dir.resolve(FILE);
    String source = file.toString();
    Object root;
    try {
      root = Json.parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (NoSuchFileException e) {
      throw (IllegalArgumentException) notACheckpoint(dir).initCause(e);
    } catch (java.nio.charset.MalformedInputException e) {
      throw new IllegalArgumentException(source + " is not UTF-8 text", e);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + " is not valid JSON: " + e.getMessage(), e);
    }
    try {
      return read(dir, model, source, object(root, source, "the checkpoint"));
    } catch (IllegalArgumentException e) {
      // The records' own checks (a negative offset, say) do not know the file.
      if (e.getMessage() != null && e.getMessage().startsWith(source)) throw e;
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  private static Checkpoint read(Path dir, ModelSnapshot model, String source, Map<String, Object> top)
      throws IOException {
    if (!FORMAT.equals(top.get("format"))) {
      throw new IllegalArgumentException(source + " has format " + top.get("format") + ", expected \"" + FORMAT + "\"");
    }
    long version = integer(top, "formatVersion", source);
    if (version != FORMAT_VERSION) {
      throw new IllegalArgumentException(source + " has format version " + version + ", this reader supports "
          + FORMAT_VERSION + " only");
    }
    long step = integer(top, "step", source);
    if (step != model.version()) {
      throw new IllegalArgumentException(source + " says step " + step + " but the manifest's version is "
          + model.version());
    }
    List<Checkpoint.Slots> slots = new ArrayList<>();
    for (Object o : array(top, "slots", source)) {
      Map<String, Object> s = object(o, source, "slots[]");
      if (!(s.get("parameter") instanceof String parameter)) {
        throw new IllegalArgumentException(source + ": slots[].parameter must be a string");
      }
      if (!model.names().contains(parameter)) {
        throw new IllegalArgumentException(source + ": slots of " + parameter + ", which the model lacks; it has "
            + model.names());
      }
      int size = model.parameter(parameter).size();
      List<float[]> values = new ArrayList<>();
      for (Object f : array(s, "files", source)) {
        Map<String, Object> e = object(f, source, "slots[].files[]");
        if (!(e.get("file") instanceof String name) || !FileNames.isPlainFileName(name)) {
          throw new IllegalArgumentException(source + ": slot file of " + parameter + " is not a plain file name");
        }
        if (!(e.get("sha256") instanceof String sha)) {
          throw new IllegalArgumentException(source + ": slot file " + name + " lacks sha256");
        }
        long bytes = integer(e, "bytes", source);
        if (bytes != 4L * size) {
          throw new IllegalArgumentException(source + ": slot file " + name + " has " + bytes + " bytes, parameter "
              + parameter + " needs " + 4L * size);
        }
        values.add(ModelFiles.readValues(dir, new ModelManifest.Entry(parameter, new int[] {size}, name, bytes, sha), FILE));
      }
      long examples = s.containsKey("examples") ? integer(s, "examples", source) : -1;
      slots.add(new Checkpoint.Slots(parameter, integer(s, "updates", source), examples, values));
    }
    List<Checkpoint.ReaderOffset> offsets = new ArrayList<>();
    for (Object o : array(top, "readerOffsets", source)) {
      Map<String, Object> r = object(o, source, "readerOffsets[]");
      offsets.add(new Checkpoint.ReaderOffset(int32(r, "epoch", source), int32(r, "task", source),
          integer(r, "offset", source)));
    }
    return new Checkpoint(model, slots, offsets, int32(top, "epochsDone", source));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Object v, String source, String where) {
    if (!(v instanceof Map)) throw new IllegalArgumentException(source + ": " + where + " must be a JSON object");
    return (Map<String, Object>) v;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> array(Map<String, Object> m, String key, String source) {
    if (!(m.get(key) instanceof List)) throw new IllegalArgumentException(source + ": " + key + " must be a JSON array");
    return (List<Object>) m.get(key);
  }

  private static int int32(Map<String, Object> m, String key, String source) {
    long v = integer(m, key, source);
    if (v != (int) v) throw new IllegalArgumentException(source + ": " + key + " must be a 32-bit integer, got " + v);
    return (int) v;
  }

  private static long integer(Map<String, Object> m, String key, String source) {
    if (!(m.get(key) instanceof BigDecimal n)) {
      throw new IllegalArgumentException(source + ": " + key + " must be an integer, got " + m.get(key));
    }
    try {
      return n.longValueExact();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(source + ": " + key + " must be a 64-bit integer, got " + n, e);
    }
  }
}
