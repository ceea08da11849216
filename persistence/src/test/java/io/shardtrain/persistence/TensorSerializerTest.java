package io.shardtrain.persistence;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializers;
import io.shardtrain.compute.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class TensorSerializerTest {
  static final ActorTestKit testKit = ActorTestKit.create("TensorSerializerTest");

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  @Test
  void tensorRoundTripsThroughAkkaSerializationBitForBit() throws Exception {
    float[] values = {1.5f, -0f, Float.MIN_VALUE, Float.MAX_VALUE, 3.1415927f, -2e-38f};
    Tensor t = Tensor.of(values, 2, 3);
    Serialization serialization = SerializationExtension.get(testKit.system().classicSystem());
    var serializer = serialization.findSerializerFor(t);
    assertEquals(TensorSerializer.IDENTIFIER, serializer.identifier());
    byte[] bytes = serializer.toBinary(t);
    assertEquals(4 + 8 + 24, bytes.length);
    Tensor back = (Tensor) serialization.deserialize(bytes, serializer.identifier(),
        Serializers.manifestFor(serializer, t)).get();
    assertArrayEquals(new int[] {2, 3}, back.shape());
    for (int i = 0; i < values.length; i++) {
      assertEquals(Float.floatToRawIntBits(values[i]), Float.floatToRawIntBits(back.data()[i]));
    }
  }

  @Test
  void encodingIsLittleEndianRankShapeThenValues() {
    byte[] bytes = TensorCodec.toBytes(Tensor.of(new float[] {1f, 2f, 3f}, 3));
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    assertEquals(1, b.getInt());
    assertEquals(3, b.getInt());
    assertEquals(1f, b.getFloat());
    assertEquals(2f, b.getFloat());
    assertEquals(3f, b.getFloat());
  }

  @Test
  void truncatedOrMalformedBytesAreRejectedWithTheReason() {
    byte[] ok = TensorCodec.toBytes(Tensor.of(new float[] {1f, 2f, 3f, 4f}, 2, 2));
    byte[] cut = java.util.Arrays.copyOf(ok, ok.length - 1);
    var e = assertThrows(IllegalArgumentException.class, () -> TensorCodec.fromBytes(cut));
    assertTrue(e.getMessage().contains("[2, 2]"), e.getMessage());
    byte[] badRank = ok.clone();
    badRank[0] = 9;
    e = assertThrows(IllegalArgumentException.class, () -> TensorCodec.fromBytes(badRank));
    assertTrue(e.getMessage().contains("rank 9"), e.getMessage());
    byte[] trailing = java.util.Arrays.copyOf(ok, ok.length + 4);
    e = assertThrows(IllegalArgumentException.class, () -> TensorCodec.fromBytes(trailing));
    assertTrue(e.getMessage().contains("trailing"), e.getMessage());
  }

  // Shapes whose element count, or its byte count, does not fit a long.

  @Test
  void shapeWhoseElementCountWrapsToZeroIsRefused() {
    ByteBuffer b = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(4).putInt(65536).putInt(65536).putInt(65536).putInt(65536);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TensorCodec.fromBytes(b.array()));
    assertEquals("tensor of shape [65536, 65536, 65536, 65536] needs more than 2^63 floats of 4 bytes, only 0 bytes remain", e.getMessage());
  }

  @Test
  void shapeWhoseByteCountWrapsNegativeIsRefusedBeforeAllocating() {
    ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(3).putInt(Integer.MAX_VALUE).putInt(Integer.MAX_VALUE).putInt(2);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TensorCodec.fromBytes(b.array()));
    assertEquals("tensor of shape [2147483647, 2147483647, 2] needs 9223372028264841218 floats of 4 bytes, only 0 bytes remain",
        e.getMessage());
  }
}
