package io.shardtrain.compute.data;

/**
 * One batch from a {@link BatchReader}: the example indices (into the whole dataset), their
 * features ({@code size * dim}, row-major; null where the reader left them to the caller,
 * {@link BatchReader#nextUnread}), and either class labels (classification datasets) or
 * float targets (others); the field that does not apply is null. {@code positionAfter} is the
 * reader position once this batch is consumed, the value to report as progress.
 */
public record Batch(int[] indices, float[] features, int[] labels, float[] targets, int size,
    ReaderPosition positionAfter) {}
