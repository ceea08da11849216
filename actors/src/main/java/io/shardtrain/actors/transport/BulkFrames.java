package io.shardtrain.actors.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The bulk wire format, shared by {@link BulkTransport} and the raw-socket baseline of
 * {@link TransportBenchmark}: a 16-byte little-endian header (magic, transfer id, length in
 * floats) followed by the floats, little-endian, staged through a reused direct buffer.
 */
final class BulkFrames {
  static final int MAGIC = 0x46425453; // bytes "STBF" when written little-endian
  static final int HEADER_BYTES = 16;
  static final int CHUNK_BYTES = 1 << 20;

  private BulkFrames() {}

  /** A header as read from the wire, not yet checked. */
  record Header(int magic, long transferId, int length) {}

  static ByteBuffer newBuffer() {
    return ByteBuffer.allocateDirect(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Writes one frame; {@code buf} is a buffer from {@link #newBuffer()}, reused between calls. */
  static void write(SocketChannel ch, ByteBuffer buf, long transferId, float[] values, int offset, int length)
      throws IOException {
    int pos = offset;
    int end = offset + length;
    buf.clear();
    buf.putInt(MAGIC).putLong(transferId).putInt(length);
    while (true) {
      int n = Math.min(end - pos, buf.remaining() / Float.BYTES);
      buf.asFloatBuffer().put(values, pos, n);
      buf.position(buf.position() + n * Float.BYTES);
      pos += n;
      buf.flip();
      while (buf.hasRemaining()) ch.write(buf);
      buf.clear();
      if (pos == end) return;
    }
  }

  /** The next header, or null when the peer closed the connection cleanly between frames. */
  static Header readHeader(SocketChannel ch, ByteBuffer buf) throws IOException {
    buf.clear().limit(HEADER_BYTES);
    while (buf.hasRemaining()) {
      if (ch.read(buf) < 0) {
        if (buf.position() == 0) return null;
        throw new EOFException("connection closed inside a frame header");
      }
    }
    buf.flip();
    return new Header(buf.getInt(), buf.getLong(), buf.getInt());
  }

  /** Reads {@code dst.length} floats of payload into {@code dst}. */
  static void readPayload(SocketChannel ch, ByteBuffer buf, float[] dst) throws IOException {
    int got = 0;
    while (got < dst.length) {
      int n = Math.min(dst.length - got, buf.capacity() / Float.BYTES);
      buf.clear().limit(n * Float.BYTES);
      while (buf.hasRemaining()) {
        if (ch.read(buf) < 0) throw new EOFException("connection closed inside a payload");
      }
      buf.flip();
      buf.asFloatBuffer().get(dst, got, n);
      got += n;
    }
  }
}
