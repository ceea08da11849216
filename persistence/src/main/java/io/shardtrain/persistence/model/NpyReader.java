package io.shardtrain.persistence.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads NumPy {@code .npy} files holding little-endian float32 arrays in C order (format versions
 * 1.0 and 2.0): what {@link NpyWriter} and {@code numpy.save} write for {@code float32} data.
 *
 * <p>Other dtypes, Fortran order, a bad magic string or a data length that does not match the
 * shape are rejected with an IllegalArgumentException naming the file.
 */
public final class NpyReader {
  private static final Pattern DESCR = Pattern.compile("'descr'\\s*:\\s*'([^']*)'");
  private static final Pattern FORTRAN = Pattern.compile("'fortran_order'\\s*:\\s*(True|False)");
  private static final Pattern SHAPE = Pattern.compile("'shape'\\s*:\\s*\\(([^)]*)\\)");

  private NpyReader() {}

  /**
   * The array in {@code file}, named after the file: its name without {@code .npy}, with the
   * percent-escapes of docs/MODEL-FORMAT.md undone ({@code dense1.weight.npy} is
   * {@code dense1.weight}).
   */
  public static ParameterValues read(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
    if (all.length < 10) throw bad(file, "is " + all.length + " bytes, shorter than an npy preamble");
    for (int i = 0; i < NpyWriter.MAGIC.length; i++) {
      if (all[i] != NpyWriter.MAGIC[i]) throw bad(file, "does not start with \\x93NUMPY");
    }
    int major = all[6];
    int minor = all[7];
    long headerLen;
    int dataStart;
    if (major == 1 && minor == 0) {
      headerLen = b.getShort(8) & 0xffff;
      dataStart = 10;
    } else if (major == 2 && minor == 0) {
      if (all.length < 12) throw bad(file, "is too short for an npy 2.0 preamble");
      headerLen = b.getInt(8) & 0xffffffffL;
      dataStart = 12;
    } else {
      throw bad(file, "has npy format version " + major + "." + minor + ", expected 1.0 or 2.0");
    }
    if (dataStart + headerLen > all.length) {
      throw bad(file, "header length " + headerLen + " runs past the end of the file");
    }
    String header = new String(all, dataStart, (int) headerLen, StandardCharsets.ISO_8859_1);
    dataStart += (int) headerLen;
    String descr = group(DESCR, header, file, "descr");
    if (!descr.equals("<f4")) {
      throw bad(file, "has dtype '" + descr + "', only little-endian float32 '<f4' is supported");
    }
    if (group(FORTRAN, header, file, "fortran_order").equals("True")) {
      throw bad(file, "is in Fortran order, only C order is supported");
    }
    String tuple = group(SHAPE, header, file, "shape").trim();
    String[] parts = tuple.isEmpty() ? new String[0] : tuple.split("\\s*,\\s*");
    int rank = parts.length;
    if (rank > 0 && parts[rank - 1].isEmpty()) rank--;
    if (rank == 0) throw bad(file, "holds a 0-d array, expected rank 1 or more");
    int[] shape = new int[rank];
    for (int i = 0; i < rank; i++) {
      try {
        shape[i] = Integer.parseInt(parts[i].trim());
      } catch (NumberFormatException e) {
        throw bad(file, "has a bad shape (" + tuple + ")");
      }
      if (shape[i] < 0) throw bad(file, "has a bad shape (" + tuple + ")");
    }
    long count = io.shardtrain.compute.Tensor.elementCount(shape);
    long dataBytes = all.length - (long) dataStart;
    if (count > Integer.MAX_VALUE - 8 || dataBytes != 4 * count) {
      throw bad(file, "has " + dataBytes + " data bytes, shape (" + tuple + ") of float32 needs "
          + (count > Integer.MAX_VALUE - 8 ? "more than an array holds" : String.valueOf(4 * count)));
    }
    float[] values = new float[(int) count];
    b.position(dataStart);
    b.asFloatBuffer().get(values);
    String stem = file.getFileName().toString();
    if (stem.endsWith(".npy")) stem = stem.substring(0, stem.length() - 4);
    return new ParameterValues(FileNames.decode(stem), shape, values);
  }

  private static String group(Pattern p, String header, Path file, String key) {
    Matcher m = p.matcher(header);
    if (!m.find()) throw bad(file, "has no readable '" + key + "' in its header: " + header.trim());
    return m.group(1);
  }

  private static IllegalArgumentException bad(Path file, String what) {
    return new IllegalArgumentException("npy file " + file + " " + what);
  }
}
