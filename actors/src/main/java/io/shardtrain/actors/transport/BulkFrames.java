package io.shardtrain.actors.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;

/**
 * The bulk wire format. {@link BulkTransport} sends and accepts only letter frames
 * ({@link #writeLetter}). The plain frame ({@link #write}: a 16-byte little-endian header of magic,
 * id and length in floats, then the floats) is the same framing without a message; only the
 * raw-socket baseline of the transport benchmark (module {@code bench}) uses it, which is why it
 * and the header and payload readers are public. Floats are little-endian, staged through a reused
 * direct buffer; the copies count in {@link WireTimings} while that is on. Not an API.
 */
public final class BulkFrames {
  /** A plain frame: an id and floats, no message. */
  static final int MAGIC = 0x46425453; // bytes "STBF" when written little-endian
  /** A letter frame: a serialized message, then its floats as fp32 (see {@link #writeLetter}). */
  static final int LETTER_MAGIC = 0x4C425453; // bytes "STBL"
  /** A letter frame whose floats travel as bf16, 2 bytes each. */
  static final int LETTER_BF16_MAGIC = 0x48425453; // bytes "STBH"
  /** Most bytes of a letter's serialized message and manifest: they travel in the first chunk. */
  static final int MAX_LETTER_BYTES = 64 << 10;
  static final int HEADER_BYTES = 16;
  static final int CHUNK_BYTES = 1 << 20;

  private BulkFrames() {}

  /**
   * A header as read from the wire, not yet checked; {@code id} is a plain frame's id, or a
   * letter's serializer id (high 32 bits) and message byte count (low 32 bits).
   */
  public record Header(int magic, long id, int length) {}

  public static ByteBuffer newBuffer() {
    return ByteBuffer.allocateDirect(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Writes one plain frame; {@code buf} is a buffer from {@link #newBuffer()}, reused between calls. */
  public static void write(WritableByteChannel ch, ByteBuffer buf, long id, float[] values, int offset, int length)
      throws IOException {
    buf.clear();
    buf.putInt(MAGIC).putLong(id).putInt(length);
    writeFloats(ch, buf, values, offset, length, WirePrecision.FP32);
  }

  /**
   * Writes the floats after what {@code buf} already holds, encoded in {@code precision} straight
   * into it, flushing it chunk by chunk.
   */
  private static void writeFloats(WritableByteChannel ch, ByteBuffer buf, float[] values, int offset, int length,
      WirePrecision precision) throws IOException {
    // Only the copies are timed, not the socket writes between them.
    boolean timed = WireTimings.on();
    long copyNanos = 0;
    int pos = offset;
    int end = offset + length;
    while (true) {
      int n = Math.min(end - pos, buf.remaining() / precision.bytesPerValue());
      long t0 = timed ? System.nanoTime() : 0;
      precision.put(buf, values, pos, n);
      if (timed) copyNanos += System.nanoTime() - t0;
      pos += n;
      buf.flip();
      while (buf.hasRemaining()) ch.write(buf);
      buf.clear();
      if (pos == end) break;
    }
    if (timed && length > 0) WireTimings.add(WireTimings.Kind.COPY_OUT, copyNanos);
  }

  /**
   * Writes one letter frame: the header (the letter magic of {@code precision}; the serializer id
   * in the high 32 bits of the long and the message's byte count in the low; the float count), the
   * manifest (int byte count, UTF-8), the message bytes, then the floats in {@code precision}.
   */
  static void writeLetter(WritableByteChannel ch, ByteBuffer buf, int serializerId, byte[] manifest, byte[] message,
      float[] values, int offset, int length, WirePrecision precision) throws IOException {
    buf.clear();
    buf.putInt(letterMagic(precision))
        .putLong(((long) serializerId << 32) | (message.length & 0xFFFF_FFFFL)).putInt(length);
    buf.putInt(manifest.length).put(manifest).put(message);
    writeFloats(ch, buf, values, offset, length, precision);
    // The message's own bytes counted when the wire serializer wrote them.
    if (WireTimings.on()) {
      WireTimings.addBytesSent(HEADER_BYTES + Integer.BYTES + manifest.length
          + (long) length * precision.bytesPerValue());
    }
  }

  static int letterMagic(WirePrecision precision) {
    return precision == WirePrecision.BF16 ? LETTER_BF16_MAGIC : LETTER_MAGIC;
  }

  /** The precision of a letter frame's floats by its magic; null when {@code magic} is no letter's. */
  static WirePrecision letterPrecision(int magic) {
    return switch (magic) {
      case LETTER_MAGIC -> WirePrecision.FP32;
      case LETTER_BF16_MAGIC -> WirePrecision.BF16;
      default -> null;
    };
  }

  /** Reads a letter's manifest and message bytes after its header. */
  static byte[][] readLetter(ReadableByteChannel ch, ByteBuffer buf, int messageBytes) throws IOException {
    buf.clear().limit(Integer.BYTES);
    fill(ch, buf);
    int manifestBytes = buf.flip().getInt();
    // Summed as longs: two counts near 2^31 wrap to a negative int and would pass.
    if (manifestBytes < 0 || messageBytes < 0 || (long) manifestBytes + messageBytes > MAX_LETTER_BYTES) {
      throw new IOException("letter of " + messageBytes + " bytes with a manifest of " + manifestBytes
          + " bytes exceeds " + MAX_LETTER_BYTES);
    }
    buf.clear().limit(manifestBytes + messageBytes);
    fill(ch, buf);
    buf.flip();
    byte[] manifest = new byte[manifestBytes];
    byte[] message = new byte[messageBytes];
    buf.get(manifest).get(message);
    return new byte[][] {manifest, message};
  }

  private static void fill(ReadableByteChannel ch, ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      if (ch.read(buf) < 0) throw new EOFException("connection closed inside a letter");
    }
  }

  /** The next header, or null when the peer closed the connection cleanly between frames. */
  public static Header readHeader(ReadableByteChannel ch, ByteBuffer buf) throws IOException {
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

  /** Reads {@code dst.length} fp32 floats of payload into {@code dst}. */
  public static void readPayload(ReadableByteChannel ch, ByteBuffer buf, float[] dst) throws IOException {
    readPayload(ch, buf, dst, WirePrecision.FP32);
  }

  /**
   * Reads a payload of {@code count} floats in {@code precision}, as fp32. The array grows with
   * what has arrived, to at most four times that, rather than taking the header's word: a
   * 16-byte header may declare the largest payload allowed and then send nothing.
   */
  static float[] readPayload(ReadableByteChannel ch, ByteBuffer buf, int count, WirePrecision precision) throws IOException {
    // Only the copies are timed, not the waits for the socket between them.
    long copyNanos = 0;
    int chunk = buf.capacity() / precision.bytesPerValue();
    float[] dst = new float[Math.min(count, chunk)];
    int got = 0;
    while (got < count) {
      if (got == dst.length) dst = Arrays.copyOf(dst, (int) Math.min(count, 4L * got));
      int n = Math.min(dst.length - got, chunk);
      copyNanos += readChunk(ch, buf, dst, got, n, precision);
      got += n;
    }
    if (WireTimings.on() && count > 0) WireTimings.add(WireTimings.Kind.COPY_IN, copyNanos);
    return dst;
  }

  /** Reads {@code dst.length} floats of payload in {@code precision} into {@code dst}, as fp32. */
  static void readPayload(ReadableByteChannel ch, ByteBuffer buf, float[] dst, WirePrecision precision)
      throws IOException {
    long copyNanos = 0;
    int chunk = buf.capacity() / precision.bytesPerValue();
    for (int got = 0; got < dst.length; got += chunk) {
      copyNanos += readChunk(ch, buf, dst, got, Math.min(dst.length - got, chunk), precision);
    }
    if (WireTimings.on() && dst.length > 0) WireTimings.add(WireTimings.Kind.COPY_IN, copyNanos);
  }

  /** Reads {@code n} floats (at most a buffer's worth) into {@code dst} at {@code at}; the copy's nanoseconds while timed. */
  private static long readChunk(ReadableByteChannel ch, ByteBuffer buf, float[] dst, int at, int n, WirePrecision precision)
      throws IOException {
    buf.clear().limit(n * precision.bytesPerValue());
    while (buf.hasRemaining()) {
      if (ch.read(buf) < 0) throw new EOFException("connection closed inside a payload");
    }
    buf.flip();
    if (!WireTimings.on()) {
      precision.get(buf, dst, at, n);
      return 0;
    }
    long t0 = System.nanoTime();
    precision.get(buf, dst, at, n);
    return System.nanoTime() - t0;
  }
}
