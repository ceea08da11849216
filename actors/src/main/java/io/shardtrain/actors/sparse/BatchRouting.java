package io.shardtrain.actors.sparse;

import io.shardtrain.compute.sparse.RowHash;
import java.util.Arrays;

/**
 * Where a batch's row ids go: each shard's ids, once each in the order first seen
 * ({@link #ids(int)}), and for every position of the batch the shard and the place in that
 * shard's list that answer it. It gathers the shards' rows into batch order and cuts a batch's
 * row gradients into each shard's (an id's gradients at several positions summed). Plain; no actor.
 */
public final class BatchRouting {
  private final int dim;
  private final long[][] shardIds;
  private final int[] shardOf;
  private final int[] place;

  private BatchRouting(int dim, long[][] shardIds, int[] shardOf, int[] place) {
    this.dim = dim;
    this.shardIds = shardIds;
    this.shardOf = shardOf;
    this.place = place;
  }

  /** The routing of {@code ids} over {@code spec}'s shards; ids outside the table are refused. */
  public static BatchRouting of(TableSpec spec, long[] ids) {
    int shards = spec.shards();
    int[] shardOf = new int[ids.length];
    int[] place = new int[ids.length];
    int[] counts = new int[shards];
    // Open addressing over ids (all >= 0, so -1 marks a free slot): no boxed key per id.
    int capacity = Integer.highestOneBit(Math.max(16, ids.length * 2 - 1)) << 1;
    int mask = capacity - 1;
    long[] keys = new long[capacity];
    int[] places = new int[capacity];
    Arrays.fill(keys, -1L);
    long[][] lists = new long[shards][];
    for (int s = 0; s < shards; s++) lists[s] = new long[Math.max(4, ids.length / shards + 16)];
    for (int k = 0; k < ids.length; k++) {
      long id = ids[k];
      int s = shardOf(spec, id, k);
      shardOf[k] = s;
      int h = (int) RowHash.mix(id) & mask;
      while (keys[h] != -1L && keys[h] != id) h = (h + 1) & mask;
      if (keys[h] == -1L) {
        if (counts[s] == lists[s].length) lists[s] = Arrays.copyOf(lists[s], counts[s] * 2);
        keys[h] = id;
        places[h] = counts[s]++;
        lists[s][places[h]] = id;
      }
      place[k] = places[h];
    }
    for (int s = 0; s < shards; s++) lists[s] = Arrays.copyOf(lists[s], counts[s]);
    return new BatchRouting(spec.dim(), lists, shardOf, place);
  }

  /** The routing of {@code ids}, which are distinct (a batch's rows, each once), as {@link #of} makes it, without the hashing. */
  public static BatchRouting ofDistinct(TableSpec spec, long[] ids) {
    int shards = spec.shards();
    int[] shardOf = new int[ids.length];
    int[] place = new int[ids.length];
    int[] counts = new int[shards];
    for (int k = 0; k < ids.length; k++) {
      long id = ids[k];
      int s = shardOf(spec, id, k);
      shardOf[k] = s;
      place[k] = counts[s]++;
    }
    long[][] lists = new long[shards][];
    for (int s = 0; s < shards; s++) lists[s] = new long[counts[s]];
    for (int k = 0; k < ids.length; k++) lists[shardOf[k]][place[k]] = ids[k];
    return new BatchRouting(spec.dim(), lists, shardOf, place);
  }

  /** The shard of {@code id}, at position {@code k} of a request; an id outside the table is refused. */
  private static int shardOf(TableSpec spec, long id, int k) {
    if (id < 0 || id >= spec.rows()) {
      throw new IllegalArgumentException("row id " + id + " at position " + k + " is outside table " + spec.name()
          + " [0, " + spec.rows() + ")");
    }
    return spec.shardOf(id);
  }

  public int shards() {
    return shardIds.length;
  }

  /** Shard {@code shard}'s ids of the batch, each once. */
  public long[] ids(int shard) {
    return shardIds[shard];
  }

  /** The batch's rows in batch order from each shard's {@code rows[shard]} (in the order of {@link #ids(int)}). */
  public float[] gather(float[][] rows) {
    float[] out = new float[shardOf.length * dim];
    for (int k = 0; k < shardOf.length; k++) {
      System.arraycopy(rows[shardOf[k]], place[k] * dim, out, k * dim, dim);
    }
    return out;
  }

  /** Shard {@code shard}'s gradient rows from the batch's {@code grads} (row per position), repeated ids summed. */
  public float[] scatter(float[] grads, int shard) {
    if (grads.length != shardOf.length * dim) {
      throw new IllegalArgumentException(shardOf.length + " positions of dim " + dim + " need " + shardOf.length * dim
          + " gradient floats, not " + grads.length);
    }
    float[] out = new float[shardIds[shard].length * dim];
    for (int k = 0; k < shardOf.length; k++) {
      if (shardOf[k] != shard) continue;
      int to = place[k] * dim;
      for (int j = 0; j < dim; j++) out[to + j] += grads[k * dim + j];
    }
    return out;
  }
}
