package io.shardtrain.samples.data;

import io.shardtrain.compute.data.MalformedDataException;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;

/**
 * A minimal reader for gzip-compressed tar archives (ustar, with the pax and GNU long-name
 * extensions that npm and GNU tar write). It extracts chosen regular files into one directory and
 * nothing else: no links, no directories, no paths outside the target.
 */
public final class TarGz {
  private static final int BLOCK = 512;

  private TarGz() {}

  /**
   * Extracts the regular files whose archive path is in {@code wanted} into {@code destDir}, each
   * under its base name. Returns archive path to extracted file, in archive order; paths that are
   * not in the archive are simply absent from the result.
   */
  public static Map<String, Path> extract(Path archive, Set<String> wanted, Path destDir) throws IOException {
    Map<String, Path> out = new LinkedHashMap<>();
    try (InputStream in = new BufferedInputStream(
        new GZIPInputStream(new BufferedInputStream(Files.newInputStream(archive), 1 << 16), 1 << 16), 1 << 16)) {
      byte[] header = new byte[BLOCK];
      String longName = null;
      while (true) {
        if (!readBlock(in, header)) {
          throw new MalformedDataException(archive + ": truncated tar archive, it ends without its end marker");
        }
        if (isZero(header)) break;
        verifyChecksum(archive, header);
        long size = parseSize(archive, header);
        char type = (char) header[156];
        String name = longName != null ? longName : headerName(header);
        longName = null;
        if (type == 'x' || type == 'L') {
          byte[] body = readBody(archive, in, size);
          // The long name applies to the next entry only.
          longName = type == 'L' ? cString(body, 0, body.length) : paxPath(body);
          continue;
        }
        if ((type == '0' || type == '\0') && wanted.contains(name)) {
          String base = name.substring(name.lastIndexOf('/') + 1);
          if (base.isEmpty() || base.equals("..") || base.equals(".")) {
            throw new MalformedDataException(archive + ": entry " + name + " has no usable file name");
          }
          Path target = destDir.resolve(base);
          try (OutputStream os = Files.newOutputStream(target)) {
            copy(archive, in, os, size);
          }
          out.put(name, target);
          skip(archive, in, padding(size));
        } else {
          skip(archive, in, size + padding(size));
        }
      }
    } catch (java.util.zip.ZipException | java.io.EOFException e) {
      throw new MalformedDataException(archive + ": corrupt or truncated gzip data (" + e.getMessage() + ")", e);
    }
    return out;
  }

  private static long padding(long size) {
    return (BLOCK - size % BLOCK) % BLOCK;
  }

  private static String headerName(byte[] h) {
    String name = cString(h, 0, 100);
    boolean ustar = h[257] == 'u' && h[258] == 's' && h[259] == 't' && h[260] == 'a' && h[261] == 'r';
    if (ustar) {
      String prefix = cString(h, 345, 155);
      if (!prefix.isEmpty()) return prefix + "/" + name;
    }
    return name;
  }

  /** The {@code path} record of a pax extended header, or null. Records are "LEN key=value\n". */
  private static String paxPath(byte[] body) {
    int pos = 0;
    String path = null;
    while (pos < body.length) {
      int space = pos;
      while (space < body.length && body[space] != ' ') space++;
      if (space >= body.length) break;
      int len;
      try {
        len = Integer.parseInt(new String(body, pos, space - pos, StandardCharsets.US_ASCII));
      } catch (NumberFormatException e) {
        break;
      }
      if (len <= 0 || pos + len > body.length) break;
      String record = new String(body, space + 1, pos + len - space - 2, StandardCharsets.UTF_8);
      if (record.startsWith("path=")) path = record.substring(5);
      pos += len;
    }
    return path;
  }

  private static long parseSize(Path archive, byte[] h) {
    if ((h[124] & 0x80) != 0) {
      // GNU base-256 encoding for sizes of 8 GiB and more.
      long v = 0;
      for (int i = 125; i < 136; i++) v = (v << 8) | (h[i] & 0xff);
      return v;
    }
    return parseOctal(archive, h, 124, 12, "size");
  }

  private static long parseOctal(Path archive, byte[] h, int off, int len, String field) {
    long v = 0;
    int i = off;
    int end = off + len;
    while (i < end && (h[i] == ' ' || h[i] == 0)) i++;
    for (; i < end && h[i] != 0 && h[i] != ' '; i++) {
      if (h[i] < '0' || h[i] > '7') {
        throw new MalformedDataException(archive + ": bad octal " + field + " field in tar header of "
            + cString(h, 0, 100));
      }
      v = v * 8 + (h[i] - '0');
    }
    return v;
  }

  private static void verifyChecksum(Path archive, byte[] h) {
    long expected = parseOctal(archive, h, 148, 8, "checksum");
    long sum = 0;
    for (int i = 0; i < BLOCK; i++) {
      sum += (i >= 148 && i < 156) ? ' ' : (h[i] & 0xff);
    }
    if (sum != expected) {
      throw new MalformedDataException(archive + ": tar header checksum mismatch for entry "
          + cString(h, 0, 100) + " (stored " + expected + ", computed " + sum + ")");
    }
  }

  private static String cString(byte[] b, int off, int len) {
    int end = off;
    while (end < off + len && b[end] != 0) end++;
    return new String(b, off, end - off, StandardCharsets.UTF_8);
  }

  private static boolean isZero(byte[] b) {
    for (byte x : b) if (x != 0) return false;
    return true;
  }

  private static boolean readBlock(InputStream in, byte[] block) throws IOException {
    int off = 0;
    while (off < block.length) {
      int r = in.read(block, off, block.length - off);
      if (r < 0) return false;
      off += r;
    }
    return true;
  }

  private static byte[] readBody(Path archive, InputStream in, long size) throws IOException {
    if (size > 1 << 20) {
      throw new MalformedDataException(archive + ": extended tar header of " + size + " bytes is implausibly large");
    }
    byte[] body = new byte[(int) size];
    int off = 0;
    while (off < body.length) {
      int r = in.read(body, off, body.length - off);
      if (r < 0) throw new MalformedDataException(archive + ": truncated tar archive inside an extended header");
      off += r;
    }
    skip(archive, in, padding(size));
    return body;
  }

  private static void copy(Path archive, InputStream in, OutputStream out, long size) throws IOException {
    byte[] buf = new byte[1 << 16];
    long left = size;
    while (left > 0) {
      int r = in.read(buf, 0, (int) Math.min(buf.length, left));
      if (r < 0) throw new MalformedDataException(archive + ": truncated tar archive, an entry is cut short");
      out.write(buf, 0, r);
      left -= r;
    }
  }

  private static void skip(Path archive, InputStream in, long n) throws IOException {
    long left = n;
    while (left > 0) {
      long s = in.skip(left);
      if (s <= 0) {
        if (in.read() < 0) throw new MalformedDataException(archive + ": truncated tar archive");
        s = 1;
      }
      left -= s;
    }
  }
}
