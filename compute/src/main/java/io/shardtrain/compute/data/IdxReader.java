package io.shardtrain.compute.data;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * Reads IDX files, the format of MNIST and Fashion-MNIST: a magic number {@code 0 0 type rank},
 * {@code rank} big-endian int dimensions, then the elements. Gzip-compressed files are recognised
 * by their first two bytes ({@code 1f 8b}), whatever their name.
 *
 * <p>Only unsigned-byte element data (type {@code 0x08}) is supported, which is what image and
 * label files use. Content errors throw {@link MalformedDataException} naming the file and what
 * is wrong with it; I/O failures stay {@link IOException}s.
 */
public final class IdxReader {
  private static final int UBYTE = 0x08;

  private IdxReader() {}

  /** The raw content of an IDX file of unsigned bytes. */
  public record Idx(int[] dims, byte[] data) {
    public int count() {
      return dims[0];
    }
  }

  /** Images as floats in [0, 1], {@code count} rows of {@code rows*cols} pixels. */
  public record Images(int count, int rows, int cols, float[] pixels) {
    public int pixelsPerImage() {
      return rows * cols;
    }
  }

  /** Reads a whole IDX file of unsigned bytes. */
  public static Idx read(Path file) throws IOException {
    try (InputStream raw = Files.newInputStream(file)) {
      InputStream in = new BufferedInputStream(raw, 1 << 16);
      in.mark(2);
      int b0 = in.read();
      int b1 = in.read();
      in.reset();
      if (b0 == 0x1f && b1 == 0x8b) {
        in = new BufferedInputStream(new GZIPInputStream(in, 1 << 16), 1 << 16);
      }
      return read(file, new DataInputStream(in));
    } catch (java.util.zip.ZipException e) {
      throw new MalformedDataException(file + ": corrupt gzip data (" + e.getMessage() + ")", e);
    } catch (EOFException e) {
      throw new MalformedDataException(file + ": truncated gzip stream", e);
    }
  }

  private static Idx read(Path file, DataInputStream in) throws IOException {
    byte[] magic = new byte[4];
    if (readFully(in, magic) < 4) {
      throw new MalformedDataException(file + ": truncated, shorter than the 4-byte IDX magic number");
    }
    if (magic[0] != 0 || magic[1] != 0) {
      throw new MalformedDataException(file + ": bad magic number " + hex(magic) + ", an IDX file starts with 00 00");
    }
    int type = magic[2] & 0xff;
    int rank = magic[3] & 0xff;
    if (type != UBYTE) {
      throw new MalformedDataException(file + ": element type 0x" + Integer.toHexString(type)
          + " is not supported, only unsigned bytes (0x08)");
    }
    if (rank < 1) {
      throw new MalformedDataException(file + ": rank 0 in magic number " + hex(magic));
    }
    byte[] header = new byte[4 * rank];
    if (readFully(in, header) < header.length) {
      throw new MalformedDataException(file + ": truncated header, expected " + rank + " dimensions");
    }
    int[] dims = new int[rank];
    long total = 1;
    for (int i = 0; i < rank; i++) {
      dims[i] = ((header[4 * i] & 0xff) << 24) | ((header[4 * i + 1] & 0xff) << 16)
          | ((header[4 * i + 2] & 0xff) << 8) | (header[4 * i + 3] & 0xff);
      if (dims[i] < 0) {
        throw new MalformedDataException(file + ": negative dimension " + dims[i] + " at position " + i);
      }
      total *= dims[i];
      if (total > Integer.MAX_VALUE - 8) {
        throw new MalformedDataException(file + ": dimensions " + Arrays.toString(dims) + " are too large");
      }
    }
    // Read in chunks rather than allocated at the header's word: 8 bytes of header can claim 2 GB.
    byte[] data = in.readNBytes((int) total);
    if (data.length < total) {
      throw new MalformedDataException(file + ": truncated, dimensions " + Arrays.toString(dims) + " need "
          + total + " data bytes but only " + data.length + " are present");
    }
    if (in.read() >= 0) {
      throw new MalformedDataException(file + ": trailing bytes after the " + data.length
          + " data bytes of dimensions " + Arrays.toString(dims));
    }
    return new Idx(dims, data);
  }

  /** Reads an image file (rank 3: count, rows, cols), scaling bytes to [0, 1]. */
  public static Images readImages(Path file) throws IOException {
    Idx idx = read(file);
    if (idx.dims().length != 3) {
      throw new MalformedDataException(file + ": an image file has 3 dimensions, this one has "
          + Arrays.toString(idx.dims()));
    }
    byte[] data = idx.data();
    float[] pixels = new float[data.length];
    for (int i = 0; i < data.length; i++) {
      pixels[i] = (data[i] & 0xff) / 255f;
    }
    return new Images(idx.dims()[0], idx.dims()[1], idx.dims()[2], pixels);
  }

  /** Reads a label file (rank 1) as ints in [0, 255]. */
  public static int[] readLabels(Path file) throws IOException {
    Idx idx = read(file);
    if (idx.dims().length != 1) {
      throw new MalformedDataException(file + ": a label file has 1 dimension, this one has "
          + Arrays.toString(idx.dims()));
    }
    byte[] data = idx.data();
    int[] labels = new int[data.length];
    for (int i = 0; i < data.length; i++) {
      labels[i] = data[i] & 0xff;
    }
    return labels;
  }

  private static int readFully(InputStream in, byte[] buf) throws IOException {
    int off = 0;
    while (off < buf.length) {
      int r = in.read(buf, off, buf.length - off);
      if (r < 0) break;
      off += r;
    }
    return off;
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      if (sb.length() > 0) sb.append(' ');
      sb.append(String.format("%02x", x & 0xff));
    }
    return sb.toString();
  }
}
