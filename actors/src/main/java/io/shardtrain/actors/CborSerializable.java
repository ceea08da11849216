package io.shardtrain.actors;

/**
 * Marker for small control messages and events serialized with Jackson CBOR. Anything carrying
 * tensors uses a binary serializer instead (see {@code io.shardtrain.actors.ps.PsSerializer}).
 */
public interface CborSerializable {}
