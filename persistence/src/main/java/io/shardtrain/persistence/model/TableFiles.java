package io.shardtrain.persistence.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * A sparse table's two files in a model directory (docs/MODEL-FORMAT.md, "Sparse tables"): its
 * ids as little-endian int64 ({@code <name>.ids.i64}) and its rows as little-endian float32, row
 * after row ({@code <name>.f32}), each written with its SHA-256 and checked against it on load.
 */
final class TableFiles {
  static final String IDS_EXTENSION = ".ids.i64";

  private TableFiles() {}

  /** The ids file's name beside the values file {@code valuesFile} ({@code <name>.f32}). */
  static String idsFile(String valuesFile) {
    return valuesFile.substring(0, valuesFile.length() - ModelFiles.VALUES_EXTENSION.length()) + IDS_EXTENSION;
  }

  /** Writes {@code t}'s files into {@code dir} and returns its manifest entry. */
  static ModelManifest.TableEntry write(Path dir, TableValues t, String valuesFile) throws IOException {
    String idsFile = idsFile(valuesFile);
    String idsSha = writeIds(dir.resolve(idsFile), t.ids());
    String valuesSha = ModelFiles.writeValues(dir.resolve(valuesFile), t.values());
    return new ModelManifest.TableEntry(t.name(), t.dim(), t.rows(), idsFile, 8L * t.rows(), idsSha, valuesFile,
        4L * t.values().length, valuesSha);
  }

  /** The table {@code e} describes, its files checked against their lengths and hashes, its ids against their order. */
  static TableValues read(Path dir, ModelManifest.TableEntry e) throws IOException {
    ByteBuffer ids = checked(dir, e.name(), e.idsFile(), e.idsBytes(), e.idsSha256());
    ByteBuffer values = checked(dir, e.name(), e.valuesFile(), e.valuesBytes(), e.valuesSha256());
    long[] idArray = new long[(int) e.rows()];
    ids.asLongBuffer().get(idArray);
    float[] valueArray = new float[(int) (e.rows() * e.dim())];
    values.asFloatBuffer().get(valueArray);
    try {
      return new TableValues(e.name(), e.dim(), idArray, valueArray);
    } catch (IllegalArgumentException bad) {
      throw new IllegalArgumentException("model " + dir + ": " + e.idsFile() + ": " + bad.getMessage(), bad);
    }
  }

  /** Writes {@code t} as two NumPy files into {@code outDir}: {@code <name>.npy} (rows x dim, float32) and {@code <name>.ids.npy} (int64). */
  static void exportNpy(TableValues t, String valuesFile, Path outDir) throws IOException {
    String stem = valuesFile.substring(0, valuesFile.length() - ModelFiles.VALUES_EXTENSION.length());
    NpyWriter.write(outDir.resolve(stem + ".npy"), new int[] {t.rows(), t.dim()}, t.values());
    NpyWriter.writeLongs(outDir.resolve(stem + ".ids.npy"), t.ids());
  }

  private static String writeIds(Path file, long[] ids) throws IOException {
    MessageDigest sha = ModelFiles.sha256();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      NpyWriter.writeLongs(ch, ids, sha);
      ch.force(true);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private static ByteBuffer checked(Path dir, String table, String name, long bytes, String sha256) throws IOException {
    return ByteBuffer.wrap(ModelFiles.checkedBytes(dir, "table file", name, table, bytes, sha256, ModelFiles.MANIFEST))
        .order(ByteOrder.LITTLE_ENDIAN);
  }
}
