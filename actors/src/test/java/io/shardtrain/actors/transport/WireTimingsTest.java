package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WireTimingsTest {
  @Test
  void figuresAddUpPerKindAndResetToZero() {
    WireTimings.reset();
    WireTimings.add(WireTimings.Kind.SERIALIZE, 1_500);
    WireTimings.add(WireTimings.Kind.SERIALIZE, 500);
    WireTimings.add(WireTimings.Kind.COPY_IN, 7);

    Map<WireTimings.Kind, WireTimings.Figure> t = WireTimings.snapshot();
    assertEquals(new WireTimings.Figure(2_000, 2), t.get(WireTimings.Kind.SERIALIZE));
    assertEquals(new WireTimings.Figure(7, 1), t.get(WireTimings.Kind.COPY_IN));
    assertEquals(new WireTimings.Figure(0, 0), t.get(WireTimings.Kind.DESERIALIZE));
    WireTimings.reset();
    for (WireTimings.Figure f : WireTimings.snapshot().values()) assertEquals(new WireTimings.Figure(0, 0), f);
  }

  @Test
  void aFramesFloatCopiesCountOncePerFrameOnEachSideOnlyWhileTimingsAreOn() throws Exception {
    // More floats than one chunk of the staging buffer, so a frame takes several copies.
    float[] values = new float[BulkFrames.CHUNK_BYTES / Float.BYTES + 1000];
    for (int i = 0; i < values.length; i++) values[i] = i * 0.5f;
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
        SocketChannel out = SocketChannel.open(server.getLocalAddress());
        SocketChannel in = server.accept()) {
      WireTimings.reset();
      assertArrayEquals(values, sendAndReceive(out, in, values));
      assertEquals(0, WireTimings.snapshot().get(WireTimings.Kind.COPY_OUT).calls(), "off: nothing counted");

      WireTimings.enable(true);
      try {
        assertArrayEquals(values, sendAndReceive(out, in, values));
      } finally {
        WireTimings.enable(false);
      }
    }
    Map<WireTimings.Kind, WireTimings.Figure> t = WireTimings.snapshot();
    assertEquals(1, t.get(WireTimings.Kind.COPY_OUT).calls());
    assertEquals(1, t.get(WireTimings.Kind.COPY_IN).calls());
    assertTrue(t.get(WireTimings.Kind.COPY_OUT).nanos() > 0 && t.get(WireTimings.Kind.COPY_IN).nanos() > 0,
        t.toString());
  }

  @Test
  void aLetterFrameCountsItsHeaderManifestAndFloatsInTheBytesSentOnlyWhileTimingsAreOn() throws Exception {
    float[] values = new float[1000];
    byte[] manifest = "PushLetter".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] message = new byte[40];
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
        SocketChannel out = SocketChannel.open(server.getLocalAddress());
        SocketChannel in = server.accept()) {
      WireTimings.reset();
      BulkFrames.writeLetter(out, BulkFrames.newBuffer(), 7, manifest, message, values, 0, values.length,
          WirePrecision.FP32);
      assertEquals(0, WireTimings.bytesSent(), "off: nothing counted");
      WireTimings.enable(true);
      try {
        BulkFrames.writeLetter(out, BulkFrames.newBuffer(), 7, manifest, message, values, 0, values.length,
            WirePrecision.BF16);
      } finally {
        WireTimings.enable(false);
      }
    }
    // Header, manifest length and manifest, then 1000 bf16 values; the message counts where it was serialized.
    assertEquals(16 + 4 + manifest.length + 2000, WireTimings.bytesSent());
    WireTimings.reset();
    assertEquals(0, WireTimings.bytesSent());
  }

  /** One plain frame of {@code values} from {@code out} to {@code in}, the floats as read. */
  private static float[] sendAndReceive(SocketChannel out, SocketChannel in, float[] values) throws Exception {
    CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
      try {
        BulkFrames.write(out, BulkFrames.newBuffer(), 9, values, 0, values.length);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    ByteBuffer buf = BulkFrames.newBuffer();
    BulkFrames.Header h = BulkFrames.readHeader(in, buf);
    float[] got = new float[h.length()];
    BulkFrames.readPayload(in, buf, got);
    sent.get(10, TimeUnit.SECONDS);
    return got;
  }
}
