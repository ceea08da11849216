package io.shardtrain.persistence.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One segment file of the {@link EventLog}: "STLG" and the format's version (1), then
 * {@link LogRecords}' records. The file's I/O lives here: creating and checking the header, an
 * append that leaves the file as it was when it fails, reading a record back, and the scan that
 * rebuilds the log's index on open. What is live in a segment, and when it goes, the log decides.
 */
final class LogSegment {
  static final String SUFFIX = ".log";
  /** Each segment file opens with "STLG" and the format's version, so that a later format is told apart. */
  private static final int MAGIC = 0x53544c47;
  private static final int VERSION = 1;
  /** The bytes before the first record. */
  static final int FILE_HEADER = 8;

  /** What a scan hands each whole record: its body (after the header), where it starts, its length with header. */
  interface RecordVisitor {
    void record(ByteBuffer body, long offset, int bytes);
  }

  final long id;
  final Path path;
  private final FileChannel channel;
  /** Bytes of the file: the header and the records written. */
  long size;
  /** Bytes of its records the log still needs. */
  long live;

  private LogSegment(long id, Path path, FileChannel channel, long size) {
    this.id = id;
    this.path = path;
    this.channel = channel;
    this.size = size;
  }

  /** A new, empty segment {@code id} in {@code dir}. */
  static LogSegment create(Path dir, long id) throws IOException {
    Path path = dir.resolve(String.format("%020d", id) + SUFFIX);
    FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    try {
      writeHeader(ch);
    } catch (IOException e) {
      ch.close();
      throw e;
    }
    return new LogSegment(id, path, ch, FILE_HEADER);
  }

  /** The segment in {@code file}, as found; {@link #scan} checks it. */
  static LogSegment open(Path file) throws IOException {
    String name = file.getFileName().toString();
    long id;
    try {
      id = Long.parseLong(name.substring(0, name.length() - SUFFIX.length()));
    } catch (NumberFormatException e) {
      throw new IllegalStateException("journal log " + file.getParent() + ": unexpected file " + name);
    }
    FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    return new LogSegment(id, file, ch, ch.size());
  }

  /**
   * Writes {@code buffers} ({@code bytes} in all) at the end of the file. On failure the file is cut
   * back to where it ended; returns normally or throws, and throws {@link Unrecoverable} if even
   * that cut failed (the file's end is then unknown).
   */
  void append(ByteBuffer[] buffers, long bytes, boolean fsync) throws IOException {
    long start = size;
    try {
      channel.position(start);
      long written = 0;
      while (written < bytes) written += channel.write(buffers);
      if (fsync) channel.force(false);
    } catch (IOException e) {
      try {
        channel.truncate(start);
      } catch (IOException cut) {
        e.addSuppressed(cut);
        throw new Unrecoverable(path, e);
      }
      throw e;
    }
    size = start + bytes;
  }

  /** A failed append whose partial write could not be cut off: nothing more may be appended to the file. */
  static final class Unrecoverable extends IOException {
    private static final long serialVersionUID = 1L;

    Unrecoverable(Path path, IOException cause) {
      super("journal log " + path + ": a failed write could not be undone: " + cause.getMessage(), cause);
    }
  }

  /** The record of {@code bytes} at {@code offset}, header included. */
  ByteBuffer read(long offset, int bytes) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(bytes);
    readFully(b, offset);
    return b.flip();
  }

  /**
   * Checks the header and hands each whole record to {@code visitor}, in order. A record cut short
   * or failing its checksum is what a process killed while writing leaves: in the {@code last}
   * segment it and what follows are cut off; anywhere else it is corruption, an
   * {@link IllegalStateException} naming the file and byte.
   */
  void scan(boolean last, RecordVisitor visitor) throws IOException {
    ByteBuffer header = ByteBuffer.allocate(LogRecords.HEADER);
    if (size < FILE_HEADER) {
      // Only a segment created as the process died is this short: it holds nothing yet.
      if (!last) throw new IllegalStateException("journal log " + path + " is corrupt: shorter than its header");
      channel.truncate(0);
      writeHeader(channel);
      size = FILE_HEADER;
      return;
    }
    readFully(header, 0);
    header.flip();
    int magic = header.getInt();
    int version = header.getInt();
    if (magic != MAGIC) throw new IllegalStateException("journal log " + path + " is not a journal segment");
    if (version != VERSION) {
      throw new IllegalStateException("journal log " + path + " has format version " + version
          + "; this ShardTrain reads version " + VERSION);
    }
    long offset = FILE_HEADER;
    while (offset < size) {
      String problem = null;
      ByteBuffer body = null;
      int length = 0;
      if (size - offset < LogRecords.HEADER) {
        problem = "a record header cut short";
      } else {
        header.clear();
        readFully(header, offset);
        header.flip();
        length = header.getInt();
        int expected = header.getInt();
        if (length < 1 || length > size - offset - LogRecords.HEADER) {
          problem = "a record of " + length + " bytes past the end of the file";
        } else {
          body = ByteBuffer.allocate(length);
          readFully(body, offset + LogRecords.HEADER);
          body.flip();
          if (LogRecords.checksum(body) != expected) problem = "a record failing its checksum";
        }
      }
      if (problem != null) {
        if (!last) {
          throw new IllegalStateException("journal log " + path + " is corrupt at byte " + offset + ": " + problem);
        }
        channel.truncate(offset); // the tail of a write the process did not finish
        size = offset;
        return;
      }
      visitor.record(body, offset, LogRecords.HEADER + length);
      offset += LogRecords.HEADER + length;
    }
  }

  /** Closes and removes the file. */
  void delete() throws IOException {
    close();
    Files.deleteIfExists(path);
  }

  void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing after use or after a failure: nothing left to save
    }
  }

  private static void writeHeader(FileChannel ch) throws IOException {
    ByteBuffer header = ByteBuffer.allocate(FILE_HEADER).putInt(MAGIC).putInt(VERSION).flip();
    while (header.hasRemaining()) ch.write(header, FILE_HEADER - header.remaining());
  }

  private void readFully(ByteBuffer b, long position) throws IOException {
    long p = position;
    while (b.hasRemaining()) {
      int n = channel.read(b, p);
      if (n < 0) throw new IOException("unexpected end of file at " + p);
      p += n;
    }
  }
}
