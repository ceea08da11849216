package io.shardtrain.persistence.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes float32 (and int64) arrays as NumPy {@code .npy} files, format version 1.0: the magic {@code \x93NUMPY},
 * bytes {@code 1 0}, a little-endian uint16 header length, an ASCII header dict
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (r, c), }} padded with spaces and ended
 * by {@code \n} so the data starts at a multiple of 64 bytes, then the values in C order.
 *
 * <p>This is byte for byte what {@code numpy.save} writes for a C-contiguous float32 array.
 */
public final class NpyWriter {
  static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
  static final int ALIGN = 64;

  private NpyWriter() {}

  /** The Python tuple literal NumPy writes for {@code shape}: {@code (5,)}, {@code (3, 4)}. */
  static String shapeTuple(int[] shape) {
    StringBuilder b = new StringBuilder("(");
    for (int i = 0; i < shape.length; i++) b.append(i == 0 ? "" : ", ").append(shape[i]);
    if (shape.length == 1) b.append(',');
    return b.append(')').toString();
  }

  /** The full preamble (magic, version, length, padded dict) for a float32 array of {@code shape}. */
  public static byte[] header(int[] shape) {
    return header("<f4", shape);
  }

  /** The preamble for an array of NumPy type {@code descr} ({@code <f4}, {@code <i8}) and {@code shape}. */
  static byte[] header(String descr, int[] shape) {
    String dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shapeTuple(shape) + ", }";
    int unpadded = MAGIC.length + 2 + 2 + dict.length() + 1;
    int padding = (ALIGN - unpadded % ALIGN) % ALIGN;
    int headerLen = dict.length() + padding + 1;
    if (headerLen > 0xffff) {
      throw new IllegalArgumentException("npy 1.0 header for shape " + shapeTuple(shape)
          + " is too long: " + headerLen + " bytes");
    }
    ByteBuffer b = ByteBuffer.allocate(10 + headerLen).order(ByteOrder.LITTLE_ENDIAN);
    b.put(MAGIC).put((byte) 1).put((byte) 0).putShort((short) headerLen);
    b.put(dict.getBytes(StandardCharsets.US_ASCII));
    for (int i = 0; i < padding; i++) b.put((byte) ' ');
    b.put((byte) '\n');
    return b.array();
  }

  /** Writes {@code values} (row-major, {@code shape}) to {@code file}, replacing it if present. */
  public static void write(Path file, int[] shape, float[] values) throws IOException {
    new ParameterValues(file.getFileName().toString(), shape, values); // checks shape vs length
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      writeFully(ch, ByteBuffer.wrap(header(shape)));
      writeFloats(ch, values, null);
      ch.force(true);
    }
  }

  /** Writes {@code values} as a one-dimensional int64 array to {@code file}, replacing it if present. */
  public static void writeLongs(Path file, long[] values) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      writeFully(ch, ByteBuffer.wrap(header("<i8", new int[] {values.length})));
      writeLongs(ch, values, null);
      ch.force(true);
    }
  }

  /** {@link #writeFloats} for int64 values. */
  static void writeLongs(FileChannel ch, long[] values, java.security.MessageDigest digest) throws IOException {
    writeChunks(ch, values.length, 8, (buf, off, n) -> buf.asLongBuffer().put(values, off, n), digest);
  }

  /**
   * Writes {@code values} little-endian in chunks and feeds the same bytes to {@code digest} when
   * one is given: one pass for the data and its hash.
   */
  static void writeFloats(FileChannel ch, float[] values, java.security.MessageDigest digest)
      throws IOException {
    writeChunks(ch, values.length, 4, (buf, off, n) -> buf.asFloatBuffer().put(values, off, n), digest);
  }

  /** Puts values {@code [off, off + n)} of an array into a little-endian buffer. */
  private interface Chunk {
    void put(ByteBuffer buf, int off, int n);
  }

  private static void writeChunks(FileChannel ch, int length, int bytesEach, Chunk chunk,
      java.security.MessageDigest digest) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    int per = buf.capacity() / bytesEach;
    for (int off = 0; off < length; off += per) {
      int n = Math.min(per, length - off);
      buf.clear();
      chunk.put(buf, off, n);
      buf.limit(bytesEach * n);
      if (digest != null) digest.update(buf.array(), 0, bytesEach * n);
      writeFully(ch, buf);
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) ch.write(b);
  }
}
