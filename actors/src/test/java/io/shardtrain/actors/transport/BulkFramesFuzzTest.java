package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.fuzz.Hostile;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Bulk frames on hostile bytes, sent over a loopback connection and read the way a bulk
 * connection's reader reads them (BulkConnections.Inbound: header, letter check, float count
 * against {@code max-floats}, message, payload), until the sender's end of the stream. What the
 * message bytes then meet is the serializers' fuzz tests' business.
 */
class BulkFramesFuzzTest {
  /** shardtrain.transport.bulk.max-floats's default. */
  private static final int MAX_FLOATS = 1 << 24;
  private static ServerSocketChannel server;
  private static final ByteBuffer BUF = BulkFrames.newBuffer();

  @BeforeContainer
  static void listen() throws IOException {
    server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterContainer
  static void close() throws IOException {
    server.close();
  }

  /** The frames in {@code bytes}, read as a bulk connection reads them. */
  private static void readFrames(byte[] bytes) throws IOException {
    try (SocketChannel out = SocketChannel.open(server.getLocalAddress()); SocketChannel in = server.accept()) {
      out.write(ByteBuffer.wrap(bytes));
      out.shutdownOutput();
      while (true) {
        BulkFrames.Header h = BulkFrames.readHeader(in, BUF);
        if (h == null) return;
        WirePrecision precision = BulkFrames.letterPrecision(h.magic());
        if (precision == null) throw new IOException("not a letter: magic 0x" + Integer.toHexString(h.magic()));
        if (h.length() < 0 || h.length() > MAX_FLOATS) throw new IOException(h.length() + " floats");
        BulkFrames.readLetter(in, BUF, (int) h.id());
        BulkFrames.readPayload(in, BUF, h.length(), precision);
      }
    }
  }

  /** A letter frame as {@link BulkFrames#writeLetter} writes it. */
  private static byte[] letter(int magic, String manifest, byte[] message, int floats, int bytesPerFloat) {
    byte[] m = manifest.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(BulkFrames.HEADER_BYTES + 4 + m.length + message.length + floats * bytesPerFloat)
        .order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(magic).putLong((717_003L << 32) | message.length).putInt(floats).putInt(m.length).put(m).put(message);
    for (int i = 0; i < floats * bytesPerFloat; i++) b.put((byte) (i * 37));
    return b.array();
  }

  @Property
  void framesAreReadOrTheConnectionRefused(@ForAll("frames") byte[] input) {
    // A payload's array starts at one buffer's worth of floats (2 MiB for bf16), then grows with the bytes.
    Hostile.check(input, 4 << 20, 64, () -> readFrames(input), List.of(IOException.class));
  }

  @Provide
  Arbitrary<byte[]> frames() {
    byte[] fp32 = letter(BulkFrames.LETTER_MAGIC, "PushLetter", new byte[] {3, 1, 2, 3, 4, 5, 6, 7}, 5, 4);
    byte[] bf16 = letter(BulkFrames.LETTER_BF16_MAGIC, "ValuesLetter", new byte[] {3, 9}, 6, 2);
    byte[] two = new byte[fp32.length + bf16.length];
    System.arraycopy(fp32, 0, two, 0, fp32.length);
    System.arraycopy(bf16, 0, two, fp32.length, bf16.length);
    return Hostile.bytes(List.of(fp32, bf16, two));
  }

  @Example
  void aHeaderDeclaringTheLargestPayloadAndSendingNothingAllocatesLittle() {
    // 20 bytes that declare 64 MiB of payload must not cost 64 MiB.
    byte[] frame = letter(BulkFrames.LETTER_MAGIC, "PushLetter", new byte[] {3}, 0, 4);
    ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN).putInt(12, MAX_FLOATS);
    long before = Hostile.allocatedBytes();
    assertThrows(EOFException.class, () -> readFrames(frame));
    long allocated = Hostile.allocatedBytes() - before;
    assertTrue(allocated < 4 << 20, allocated + " bytes allocated");
  }

  @Example
  void manifestAndMessageCountsWhoseSumWrapsAreRefused() {
    // 10 + 0x7ffffff8 wraps to a negative int, which is below any limit.
    byte[] frame = letter(BulkFrames.LETTER_MAGIC, "PushLetter", new byte[0], 0, 4);
    ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN).putInt(4, 0x7fff_fff8);
    IOException e = assertThrows(IOException.class, () -> readFrames(frame));
    assertEquals("letter of 2147483640 bytes with a manifest of 10 bytes exceeds 65536", e.getMessage());
  }
}
