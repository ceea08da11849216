package io.shardtrain.persistence;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.fuzz.Hostile;
import java.io.NotSerializableException;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** {@link TensorSerializer} on hostile bytes: a tensor, or an error naming the problem, never a large allocation. */
class TensorSerializerFuzzTest {
  private final TensorSerializer serializer = new TensorSerializer();

  @Property
  void tensorBytesAreReadOrRefused(@ForAll("tensors") byte[] input) {
    Hostile.check(input, 1 << 20, 4, () -> serializer.fromBinary(input, "T"),
        List.of(IllegalArgumentException.class, NotSerializableException.class));
  }

  @Provide
  Arbitrary<byte[]> tensors() {
    return Hostile.bytes(List.of(TensorCodec.toBytes(Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3)),
        TensorCodec.toBytes(Tensor.of(new float[] {0.5f}, 1, 1, 1, 1)), TensorCodec.toBytes(Tensor.of(new float[0], 0))));
  }
}
