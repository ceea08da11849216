package io.shardtrain.compute.data;

import java.util.SplittableRandom;

/**
 * Cuts a dataset, or a range {@code [from, to)} of it (a data task), into batches, epoch after
 * epoch, from a position that can be saved and restored.
 *
 * <p>The order of epoch {@code e} is a pure function of {@code (shuffleSeed, e)} (Fisher-Yates
 * driven by a {@link SplittableRandom} seeded from both), or the natural order when shuffling is
 * off. So a reader created at a saved {@link ReaderPosition} yields exactly the batches the
 * original would have yielded next, whether the position lies mid-epoch or at an epoch boundary.
 *
 * <p>{@link #next()} moves on to the next epoch by itself once the current one is used up. To work
 * epoch by epoch instead, loop {@code while (!reader.epochDone()) reader.next();}. By default the
 * last partial batch of an epoch is kept; with {@code dropLast} it is skipped, and the epoch ends
 * after the last full batch. Not thread-safe: one reader per trainer.
 */
public final class BatchReader {
  private final Dataset data;
  private final int from;
  private final int length;
  private final int batchSize;
  private final long shuffleSeed;
  private final boolean shuffle;
  private final boolean dropLast;
  private long epoch;
  private long offset;
  private int[] order; // positions within [0, length) for the current epoch; null until needed
  private long orderEpoch = -1;

  /** Over the whole dataset, keeping the last partial batch. */
  public BatchReader(Dataset data, int batchSize, long shuffleSeed, boolean shuffle, ReaderPosition start) {
    this(data, 0, data.size(), batchSize, shuffleSeed, shuffle, false, start);
  }

  /** Over examples {@code [from, to)} of {@code data}; batch indices still refer to all of {@code data}. */
  public BatchReader(Dataset data, int from, int to, int batchSize, long shuffleSeed, boolean shuffle,
      boolean dropLast, ReaderPosition start) {
    if (from < 0 || to > data.size() || from > to) {
      throw new IllegalArgumentException("range [" + from + ", " + to + ") is outside the dataset's [0, "
          + data.size() + ")");
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batch size must be at least 1, not " + batchSize);
    }
    if (to == from) {
      throw new IllegalArgumentException("range [" + from + ", " + to + ") is empty");
    }
    if (dropLast && to - from < batchSize) {
      throw new IllegalArgumentException("with dropLast, a range of " + (to - from)
          + " examples never fills a batch of " + batchSize);
    }
    this.data = data;
    this.from = from;
    this.length = to - from;
    this.batchSize = batchSize;
    this.shuffleSeed = shuffleSeed;
    this.shuffle = shuffle;
    this.dropLast = dropLast;
    if (start.offset() > length) {
      throw new IllegalArgumentException("start offset " + start.offset() + " is beyond the " + length
          + " examples of an epoch");
    }
    this.epoch = start.epoch();
    this.offset = start.offset();
  }

  /** Number of examples one epoch hands out (the range, less the dropped tail with dropLast). */
  public int epochLength() {
    return dropLast ? length - length % batchSize : length;
  }

  /** Batches per epoch from the start of an epoch. */
  public int batchesPerEpoch() {
    return (epochLength() + batchSize - 1) / batchSize;
  }

  /** The current position: the next batch starts here. */
  public ReaderPosition position() {
    return new ReaderPosition(epoch, offset);
  }

  /** True when the current epoch has nothing left; the next {@link #next()} starts the next epoch. */
  public boolean epochDone() {
    return offset >= epochLength();
  }

  /** The next batch, starting the next epoch first when the current one is done. */
  public Batch next() {
    return next(batchSize);
  }

  /**
   * The next batch of at most {@code limit} examples (a batch that must end at a given offset),
   * starting the next epoch first when the current one is done.
   */
  public Batch next(int limit) {
    return next(limit, null);
  }

  /**
   * The next batch as {@link #next()}, its features written into {@code features} when that is
   * their size (then the batch's {@link Batch#features()} is that array; a short last batch of an
   * epoch gets a new one). A loop
   * that is done with each batch before it reads the next thus allocates no feature array per
   * step.
   */
  public Batch next(float[] features) {
    return next(batchSize, features);
  }

  /**
   * The next batch as {@link #next()}, its features left unread (null): the caller copies them
   * from the data set ({@link Dataset#copyFeatureColumns}), as a step run by several threads does,
   * each thread the columns it reads.
   */
  public Batch nextUnread() {
    return next(batchSize, null, false);
  }

  private Batch next(int limit, float[] reuse) {
    return next(limit, reuse, true);
  }

  private Batch next(int limit, float[] reuse, boolean read) {
    if (limit < 1) throw new IllegalArgumentException("batch limit must be at least 1, not " + limit);
    if (epochDone()) {
      epoch++;
      offset = 0;
    }
    int[] ord = orderFor(epoch);
    int count = (int) Math.min(Math.min(batchSize, limit), epochLength() - offset);
    int[] indices = new int[count];
    for (int k = 0; k < count; k++) {
      int p = (int) offset + k;
      indices[k] = from + (ord == null ? p : ord[p]);
    }
    float[] features = null;
    if (read) {
      features = reuse != null && reuse.length == count * data.dim() ? reuse : new float[count * data.dim()];
      data.copyFeatures(indices, 0, count, features);
    }
    int[] labels = null;
    float[] targets = null;
    if (data.isClassification()) {
      labels = new int[count];
      data.copyLabels(indices, 0, count, labels);
    } else {
      targets = new float[count];
      data.copyTargets(indices, 0, count, targets);
    }
    offset += count;
    return new Batch(indices, features, labels, targets, count, position());
  }

  /** The order of an epoch as positions in {@code [0, length)}, or null for the natural order. */
  private int[] orderFor(long e) {
    if (!shuffle) return null;
    if (orderEpoch != e) {
      if (order == null) order = new int[length];
      for (int i = 0; i < length; i++) order[i] = i;
      SplittableRandom r = new SplittableRandom(CtrGenerator.mix64(shuffleSeed * 0x9E3779B97F4A7C15L + e));
      for (int i = length - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
      orderEpoch = e;
    }
    return order;
  }
}
