package io.shardtrain.actors.job;

/**
 * Marker for small control messages and events serialized with Jackson CBOR. Anything carrying
 * tensors uses a binary serializer instead ({@code io.shardtrain.actors.ps.WireSerializer} for messages, {@code JournalSerializer} for events and snapshots).
 */
public interface CborSerializable {}
