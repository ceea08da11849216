package io.shardtrain.persistence.model;

import io.shardtrain.compute.FileTrees;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Saves, loads and exports whole models in the directory format of docs/MODEL-FORMAT.md: a
 * {@code manifest.json} plus one raw little-endian float32 file per parameter and two files per
 * sparse table ({@link TableFiles}).
 *
 * <p>{@link #save} is atomic: the files are written and synced in a temporary sibling directory
 * which is then renamed into place, so a reader sees either no model or a complete one. {@link
 * #load} checks every file's length and SHA-256 before returning values. Content problems are
 * IllegalArgumentExceptions naming the directory, the file and what is wrong; I/O failures stay
 * IOExceptions.
 */
public final class ModelFiles {
  /** Name of the manifest inside a model directory. */
  public static final String MANIFEST = "manifest.json";
  /** Extension of the raw parameter files. */
  public static final String VALUES_EXTENSION = ".f32";

  /** What {@link #save} does when the target directory exists and is not empty. */
  public enum IfExists {
    /** Refuse with a {@link FileAlreadyExistsException}. */
    FAIL,
    /** Replace the old model; the old directory is removed once the new one is in place. */
    REPLACE
  }

  private ModelFiles() {}

  /** {@link #save(Path, ModelSnapshot, IfExists)} that refuses to replace an existing model. */
  public static ModelManifest save(Path dir, ModelSnapshot snapshot) throws IOException {
    return save(dir, snapshot, IfExists.FAIL);
  }

  /**
   * Writes {@code snapshot} to the directory {@code dir} (created, with its parents) and returns
   * the manifest written. An existing empty directory is taken over; a non-empty one is refused
   * or replaced as {@code ifExists} says.
   */
  public static ModelManifest save(Path dir, ModelSnapshot snapshot, IfExists ifExists)
      throws IOException {
    return save(dir, snapshot, ifExists, tmp -> {});
  }

  /**
   * Throws what {@link #save(Path, ModelSnapshot, IfExists)} with {@link IfExists#FAIL} would throw
   * for {@code dir} before writing anything, and makes its parent: so a command can refuse a target
   * before the training whose model it would hold. The save's first write, a directory beside the
   * target, is tried too (made and deleted), so that a parent that takes no new entry (read-only,
   * immutable) is refused now.
   */
  public static void checkSavable(Path dir) throws IOException {
    dir = dir.toAbsolutePath().normalize();
    Path parent = checkTarget(dir, IfExists.FAIL);
    try {
      Files.delete(FileTrees.createFresh(parent, "." + dir.getFileName() + ".probe-", "", true));
    } catch (java.nio.file.FileSystemException e) {
      var refused = new java.nio.file.FileSystemException(parent.toString(), null, "cannot write a model here ("
          + e.getFile() + ": " + FileTrees.reason(e) + ")");
      refused.initCause(e);
      throw refused;
    }
  }

  /** Refuses a target that is a file, or a non-empty directory when {@code ifExists} says so; makes its parent. */
  private static Path checkTarget(Path dir, IfExists ifExists) throws IOException {
    Path parent = dir.getParent();
    if (parent == null) throw new IllegalArgumentException("cannot save a model to the root " + dir);
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw new FileAlreadyExistsException(dir.toString(), null, "exists and is not a directory");
    }
    if (ifExists == IfExists.FAIL && !isEmptyOrAbsent(dir)) {
      throw new FileAlreadyExistsException(dir.toString(), null,
          "is not empty; refusing to overwrite an existing model");
    }
    Files.createDirectories(parent);
    return parent;
  }

  /** Writes more files into the temporary directory before it is moved into place. */
  interface ExtraFiles {
    void writeInto(Path tmp) throws IOException;
  }

  /** {@link #save(Path, ModelSnapshot, IfExists)} plus {@code extra} files, all in one atomic rename. */
  static ModelManifest save(Path dir, ModelSnapshot snapshot, IfExists ifExists, ExtraFiles extra)
      throws IOException {
    dir = dir.toAbsolutePath().normalize();
    Map<String, String> fileNames = fileNames(snapshot);
    Path parent = checkTarget(dir, ifExists);
    Path tmp = FileTrees.createFresh(parent, "." + dir.getFileName() + ".tmp-", "", true);
    try {
      List<ModelManifest.Entry> entries = new ArrayList<>();
      for (ParameterValues p : snapshot.parameters()) {
        String file = fileNames.get(p.name());
        String sha = writeValues(tmp.resolve(file), p.values());
        entries.add(new ModelManifest.Entry(p.name(), p.shape(), file, 4L * p.size(), sha));
      }
      List<ModelManifest.TableEntry> tables = new ArrayList<>();
      for (TableValues t : snapshot.tables()) tables.add(TableFiles.write(tmp, t, fileNames.get(t.name())));
      ModelManifest manifest = new ModelManifest(ModelManifest.FORMAT_VERSION,
          snapshot.description(), snapshot.version(), Instant.now().truncatedTo(ChronoUnit.MILLIS),
          entries, tables);
      try (FileChannel ch = FileChannel.open(tmp.resolve(MANIFEST), StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(manifest.toJson().getBytes(StandardCharsets.UTF_8));
        while (b.hasRemaining()) ch.write(b);
        ch.force(true);
      }
      extra.writeInto(tmp);
      syncDirectory(tmp);
      moveIntoPlace(tmp, dir);
      syncDirectory(parent);
      return manifest;
    } finally {
      if (Files.exists(tmp)) FileTrees.delete(tmp);
    }
  }

  /** Reads and checks {@code dir/manifest.json} without touching the parameter files. */
  public static ModelManifest readManifest(Path dir) throws IOException {
    if (Files.isRegularFile(dir)) {
      throw new IllegalArgumentException(dir + " is a file, not a model directory (docs/MODEL-FORMAT.md)");
    }
    Path file = dir.resolve(MANIFEST);
    String json;
    try {
      json = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException(Files.isDirectory(dir)
          ? "model directory " + dir + " has no " + MANIFEST + " (is it a saved model?)"
          : "model directory " + dir + " does not exist", e);
    } catch (java.nio.charset.MalformedInputException e) {
      throw new IllegalArgumentException(file + " is not UTF-8 text", e);
    }
    return ModelManifest.parse(json, file.toString());
  }

  /**
   * Loads the model in {@code dir}, checking that every parameter file listed in the manifest is
   * present, has the declared length and the declared SHA-256.
   */
  public static ModelSnapshot load(Path dir) throws IOException {
    ModelManifest manifest = readManifest(dir);
    List<ParameterValues> params = new ArrayList<>();
    for (ModelManifest.Entry e : manifest.parameters()) {
      params.add(new ParameterValues(e.name(), e.shape(), readValues(dir, e)));
    }
    List<TableValues> tables = new ArrayList<>();
    for (ModelManifest.TableEntry t : manifest.tables()) tables.add(TableFiles.read(dir, t));
    return new ModelSnapshot(manifest.description(), manifest.version(), params, tables);
  }

  /**
   * Loads the model in {@code modelDir} (checked as in {@link #load}) and writes one {@code .npy}
   * file per parameter into {@code outDir}; see {@link #exportNpy(ModelSnapshot, Path)}.
   */
  public static List<Path> exportNpy(Path modelDir, Path outDir) throws IOException {
    return exportNpy(load(modelDir), outDir);
  }

  /**
   * Writes each parameter of {@code snapshot} to {@code outDir/<name>.npy} (the same safe file
   * names as the {@code .f32} files, see docs/MODEL-FORMAT.md) and returns the files in parameter
   * order. {@code outDir} is created if needed; same-named {@code .npy} files are replaced.
   */
  public static List<Path> exportNpy(ModelSnapshot snapshot, Path outDir) throws IOException {
    Map<String, String> names = fileNames(snapshot);
    Files.createDirectories(outDir);
    List<Path> out = new ArrayList<>();
    for (ParameterValues p : snapshot.parameters()) {
      String f32 = names.get(p.name());
      Path target = outDir.resolve(f32.substring(0, f32.length() - VALUES_EXTENSION.length())
          + ".npy");
      Path tmp = FileTrees.createFresh(outDir, ".export-", ".npy.tmp", false);
      try {
        NpyWriter.write(tmp, p.shape(), p.values());
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp);
      }
      out.add(target);
    }
    for (TableValues t : snapshot.tables()) TableFiles.exportNpy(t, names.get(t.name()), outDir);
    return out;
  }

  /** Parameter file name ({@code <encoded name>.f32}) for each parameter, checked for clashes. */
  static Map<String, String> fileNames(ModelSnapshot snapshot) {
    Map<String, String> out = new HashMap<>();
    // Lower-case keys: two names that differ only in case would share a file on macOS/Windows.
    Map<String, String> byFolded = new HashMap<>();
    List<String> names = new ArrayList<>(snapshot.names());
    for (TableValues t : snapshot.tables()) names.add(t.name());
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      String file = FileNames.encode(name) + VALUES_EXTENSION;
      // A table's ids file is the longest name it makes.
      int longest = file.getBytes(StandardCharsets.UTF_8).length
          + (i < snapshot.parameters().size() ? 0 : TableFiles.IDS_EXTENSION.length() - VALUES_EXTENSION.length());
      if (longest > FileNames.MAX_FILE_NAME_BYTES) {
        throw new IllegalArgumentException("parameter name " + name + " makes a file name of "
            + longest + " bytes, more than " + FileNames.MAX_FILE_NAME_BYTES);
      }
      String other = byFolded.put(file.toLowerCase(Locale.ROOT), name);
      if (other != null) {
        throw new IllegalArgumentException("parameters " + other + " and " + name
            + " differ only in letter case; their files would clash on case-insensitive file systems");
      }
      out.put(name, file);
    }
    return out;
  }

  static String writeValues(Path file, float[] values) throws IOException {
    MessageDigest sha = sha256();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      NpyWriter.writeFloats(ch, values, sha);
      ch.force(true);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  static float[] readValues(Path dir, ModelManifest.Entry e) throws IOException {
    return readValues(dir, e, MANIFEST);
  }

  /** The values of entry {@code e}'s file, checked against its size and hash as {@code listedIn} (a file of {@code dir}) has them. */
  static float[] readValues(Path dir, ModelManifest.Entry e, String listedIn) throws IOException {
    byte[] bytes = checkedBytes(dir, "parameter file", e.file(), e.name(), e.bytes(), e.sha256(), listedIn);
    float[] values = new float[bytes.length / 4];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
    return values;
  }

  /**
   * The bytes of {@code file} in {@code dir} (a {@code kind}, such as "parameter file", of {@code name}),
   * checked against the length and SHA-256 {@code listedIn} gives; the errors name the directory,
   * the file and what is wrong. The length is checked before the file is read.
   */
  static byte[] checkedBytes(Path dir, String kind, String file, String name, long length, String sha256,
      String listedIn) throws IOException {
    Path path = dir.resolve(file);
    long size;
    try {
      size = Files.size(path);
    } catch (NoSuchFileException ex) {
      throw new IllegalArgumentException("model " + dir + ": " + kind + " " + file + " (for " + name + ") listed in "
          + listedIn + " is missing", ex);
    }
    if (size != length) {
      throw new IllegalArgumentException("model " + dir + ": " + kind + " " + file + " has " + size + " bytes, "
          + listedIn + " says " + length);
    }
    byte[] bytes = Files.readAllBytes(path);
    if (bytes.length != length) {
      throw new IllegalArgumentException("model " + dir + ": " + kind + " " + file + " changed length while being read");
    }
    String actual = HexFormat.of().formatHex(sha256().digest(bytes));
    if (!actual.equals(sha256)) {
      throw new IllegalArgumentException("model " + dir + ": " + kind + " " + file + " has SHA-256 " + actual + ", "
          + listedIn + " says " + sha256 + " (the file is corrupt or was changed)");
    }
    return bytes;
  }

  private static void moveIntoPlace(Path tmp, Path dir) throws IOException {
    if (Files.isDirectory(dir) && isEmptyOrAbsent(dir)) Files.delete(dir);
    if (!Files.exists(dir)) {
      Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
      return;
    }
    // Replacing: park the old model beside the new one so the rename of the new one stays atomic;
    // a crash in between leaves the old model intact under the .old- name.
    Path old = dir.resolveSibling("." + dir.getFileName() + ".old-" + System.nanoTime());
    Files.move(dir, old, StandardCopyOption.ATOMIC_MOVE);
    try {
      Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      Files.move(old, dir, StandardCopyOption.ATOMIC_MOVE);
      throw e;
    }
    FileTrees.delete(old);
  }

  private static boolean isEmptyOrAbsent(Path dir) throws IOException {
    if (!Files.exists(dir)) return true;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      return !s.iterator().hasNext();
    }
  }

  private static void syncDirectory(Path dir) {
    // Makes the new entries durable on Linux; some platforms cannot open a directory, which only
    // costs durability on power loss, not correctness.
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      // best effort
    }
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
