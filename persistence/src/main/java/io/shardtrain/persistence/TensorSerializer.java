package io.shardtrain.persistence;

import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.compute.Tensor;
import java.io.NotSerializableException;

/**
 * Akka serializer for {@link Tensor} in {@link TensorCodec}'s binary format. Bound in this
 * module's {@code reference.conf}, so a tensor sent between nodes or stored in the journal is
 * never converted to text.
 */
public final class TensorSerializer extends SerializerWithStringManifest {
  /** Akka serializer ids must be unique in a system; 0-40 are Akka's own. */
  public static final int IDENTIFIER = 717_001;
  private static final String TENSOR_MANIFEST = "T";

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof Tensor) return TENSOR_MANIFEST;
    throw new IllegalArgumentException("TensorSerializer cannot serialize " + o.getClass().getName());
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof Tensor t) return TensorCodec.toBytes(t);
    throw new IllegalArgumentException("TensorSerializer cannot serialize " + o.getClass().getName());
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (TENSOR_MANIFEST.equals(manifest)) return TensorCodec.fromBytes(bytes);
    throw new NotSerializableException("unknown manifest '" + manifest + "' for TensorSerializer");
  }
}
