package io.shardtrain.compute.data;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/** Writes small IDX files for tests. */
final class IdxFiles {
  private IdxFiles() {}

  static byte[] idx(int[] dims, byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0);
    out.write(0);
    out.write(0x08);
    out.write(dims.length);
    for (int d : dims) {
      out.write(d >>> 24);
      out.write(d >>> 16);
      out.write(d >>> 8);
      out.write(d);
    }
    out.write(data, 0, data.length);
    return out.toByteArray();
  }

  static Path write(Path file, byte[] bytes, boolean gzip) throws IOException {
    if (!gzip) return Files.write(file, bytes);
    try (OutputStream os = new GZIPOutputStream(Files.newOutputStream(file))) {
      os.write(bytes);
    }
    return file;
  }
}
