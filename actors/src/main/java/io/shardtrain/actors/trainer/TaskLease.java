package io.shardtrain.actors.trainer;

import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.ReaderPosition;
import java.util.Map;

/**
 * A data task the master leased this trainer: examples {@code [from, to)} of epoch {@code epoch},
 * read from reader offset {@code offset}. {@code skip} names the blocks that already hold the
 * task's examples up to an offset (a trainer that left pushed them there before it could report
 * them): a batch ends where such a block's examples end, and a block gets nothing for a batch it
 * holds already, so no block applies an example twice.
 */
record TaskLease(int epoch, int task, int from, int to, long offset, Map<String, Long> skip) {
  TaskLease {
    skip = Map.copyOf(skip);
  }

  /** The largest batch that starts at reader offset {@code at} and crosses no block's held offset. */
  int batchLimit(long at, int batch) {
    long limit = batch;
    for (long held : skip.values()) {
      if (held > at) limit = Math.min(limit, held - at);
    }
    return (int) limit;
  }

  /** Whether {@code block} holds the examples of the batch that ends at {@code offsetAfter} already. */
  boolean holds(String block, long offsetAfter) {
    return skip.getOrDefault(block, 0L) >= offsetAfter;
  }

  /** The mark of a push whose batch ends at reader offset {@code offsetAfter}. */
  BlockProtocol.TaskMark mark(long offsetAfter) {
    return new BlockProtocol.TaskMark(epoch, task, offsetAfter);
  }

  /** A reader over the task's examples from its offset, shuffled by the job's seed and the task. */
  BatchReader openReader(Dataset train, int batch, long jobSeed) {
    return new BatchReader(train, from, to, batch, jobSeed * 1_000_003L + task, true, false,
        new ReaderPosition(epoch, offset));
  }
}
