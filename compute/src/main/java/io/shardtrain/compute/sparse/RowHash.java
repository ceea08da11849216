package io.shardtrain.compute.sparse;

/**
 * The hashes of row ids: one mix for a store's own table and another for cutting a table into
 * shards, so that the ids one shard holds do not all fall into the same buckets of its store.
 */
public final class RowHash {
  private RowHash() {}

  /** SplitMix64's finalizer: every bit of {@code x} reaches every bit of the result. */
  public static long mix(long x) {
    x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
    x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
    return x ^ (x >>> 31);
  }

  /** The shard of {@code shards} that holds row {@code id}; the same on every node and every run. */
  public static int shardOf(long id, int shards) {
    if (shards < 1) throw new IllegalArgumentException("a table needs at least 1 shard, not " + shards);
    return (int) Long.remainderUnsigned(mix(id ^ 0x5eed_0f_5ba2_5e5L), shards);
  }
}
