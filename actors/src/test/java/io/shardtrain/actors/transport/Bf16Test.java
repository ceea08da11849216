package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The bf16 codec: rounding to nearest even, the special values, and its buffer form. */
class Bf16Test {

  private static int encoded(int fp32Bits) {
    return Bf16.encode(Float.intBitsToFloat(fp32Bits)) & 0xFFFF;
  }

  @Test
  void exactValuesEncodeToTheirUpperHalfAndDecodeBack() {
    assertEquals(0x3F80, Bf16.encode(1f) & 0xFFFF);
    assertEquals(0xC000, Bf16.encode(-2f) & 0xFFFF);
    assertEquals(0x4049, Bf16.encode(3.140625f) & 0xFFFF);
    assertEquals(3.140625f, Bf16.decode((short) 0x4049));
    assertEquals(1f, Bf16.decode((short) 0x3F80));
  }

  @Test
  void roundsToNearestWithTiesToEven() {
    // 1 + 2^-8 lies halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): down to even.
    assertEquals(0x3F80, encoded(0x3F80_8000));
    // 1 + 3 * 2^-8 lies halfway between 0x3F81 (odd) and 0x3F82: up to even.
    assertEquals(0x3F82, encoded(0x3F81_8000));
    assertEquals(1.015625f, Bf16.round(1.01171875f));
    // Just past the tie, and just below it.
    assertEquals(0x3F81, encoded(0x3F80_8001));
    assertEquals(0x3F80, encoded(0x3F80_7FFF));
    // Negative values round on their magnitude.
    assertEquals(0xBF82, encoded(0xBF81_8000));
    // pi: 3.14159265 -> 3.140625 (0x4049), the nearer neighbour.
    assertEquals(3.140625f, Bf16.round((float) Math.PI));
    // A carry into the exponent: 2 - 2^-9 rounds up to 2.
    assertEquals(2f, Bf16.round(2f - 0x1p-9f));
  }

  @Test
  void nanStaysNanInfinitiesAndSignedZerosStay() {
    assertEquals(0x7FC0, Bf16.encode(Float.NaN) & 0xFFFF);
    // A NaN whose payload is only in the low 16 bits must not round into an infinity.
    assertTrue(Float.isNaN(Bf16.round(Float.intBitsToFloat(0x7F80_0001))));
    assertTrue(Float.isNaN(Bf16.round(Float.intBitsToFloat(0xFF80_FFFF))));
    assertEquals(0xFFC0, encoded(0xFF80_0001) | 0x0040, "a negative NaN keeps its sign");
    assertEquals(0x7F80, Bf16.encode(Float.POSITIVE_INFINITY) & 0xFFFF);
    assertEquals(0xFF80, Bf16.encode(Float.NEGATIVE_INFINITY) & 0xFFFF);
    assertEquals(0x8000, Bf16.encode(-0f) & 0xFFFF);
    assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(Bf16.round(-0f)));
    assertEquals(0x0000, Bf16.encode(0f) & 0xFFFF);
    // The largest fp32 is past the largest bf16's rounding range: it becomes +infinity.
    assertEquals(Float.POSITIVE_INFINITY, Bf16.round(Float.MAX_VALUE));
    // The smallest fp32 subnormal rounds to zero; a bf16 subnormal survives.
    assertEquals(0f, Bf16.round(Float.MIN_VALUE));
    assertEquals(Float.intBitsToFloat(0x0001_0000), Bf16.round(Float.intBitsToFloat(0x0001_0000)));
  }

  @Test
  void aBufferCarriesTwoBytesPerValueLittleEndian() {
    float[] values = {1f, -2f, 1.01171875f, Float.NEGATIVE_INFINITY, -0f};
    ByteBuffer buf = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
    WirePrecision.BF16.put(buf, values, 1, 4);
    assertEquals(8, buf.position());
    assertEquals(0x00, buf.get(0) & 0xFF);
    assertEquals(0xC0, buf.get(1) & 0xFF);
    buf.flip();
    float[] back = new float[5];
    WirePrecision.BF16.get(buf, back, 1, 4);
    assertEquals(0f, back[0]);
    assertEquals(-2f, back[1]);
    assertEquals(1.015625f, back[2]);
    assertEquals(Float.NEGATIVE_INFINITY, back[3]);
    assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(back[4]));
  }

  @Test
  void theGradientPrecisionSettingIsFp32ByDefaultAndABadValueNamesTheKeyAndTheChoices() {
    assertEquals(WirePrecision.FP32, WirePrecision.gradientsFromConfig(ConfigFactory.load()));
    assertEquals(WirePrecision.BF16, WirePrecision.gradientsFromConfig(ConfigFactory.parseString(
        "shardtrain.transport.gradient-precision = BF16").withFallback(ConfigFactory.load())));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WirePrecision.gradientsFromConfig(ConfigFactory.parseString(
            "shardtrain.transport.gradient-precision = fp16").withFallback(ConfigFactory.load())));
    assertEquals("shardtrain.transport.gradient-precision must be fp32 or bf16, not 'fp16'", e.getMessage());
  }
}
