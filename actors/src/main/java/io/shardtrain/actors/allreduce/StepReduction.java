package io.shardtrain.actors.allreduce;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One member's part in averaging one step's gradients over a ring of {@code n} members, bucket by
 * bucket (a bucket is a range of a gradient array): reduce-scatter, then all-gather, each bucket
 * cut into {@code n} chunks.
 *
 * <p>In reduce-scatter phase {@code p} (0 to n-2) member {@code r} sends chunk {@code (r - p) mod n}
 * to the next member: its own weighted gradient at phase 0, later the running sum it received for
 * that chunk plus its own. After phase n-2 member {@code r} holds the whole sum of chunk
 * {@code (r + 1) mod n}, divides it by the total examples and sends that mean around the ring in
 * the all-gather phases (n-1 to 2n-3), every member copying it into its bucket. Every chunk's mean
 * is computed once, by its owner, and copied everywhere else, so every replica gets the same bits.
 * The means land in the gradient arrays the buckets started with.
 *
 * <p>A member without data takes part with no examples: it forwards sums without adding to them,
 * and takes in the means like everyone else, so its replica stays equal to the others. A member
 * that wants the ring to stop (no data left in the job, or told to stop) says so in
 * {@code leaving}; every member learns the "or" of all, with the step's total examples.
 * Messages may arrive before the member started their bucket (its backward has not produced it
 * yet): they wait until it has.
 *
 * <p>The chunks of bucket 0 also carry task marks (groups of {@value #MARK} longs: ring position,
 * task epoch, task, reader offset after the batch): each member with data adds its own in
 * reduce-scatter, and the owner's complete set goes round in all-gather, so every member that
 * finished the step knows where every member's reader stood after it. Survivors of a member that
 * died tell the master its mark, so its task resumes after the last step the ring applied.
 */
public final class StepReduction {
  /** Longs per task mark: ring position, task epoch, task, reader offset after the batch. */
  public static final int MARK = 4;
  private static final int MARK_BUCKET = 0;
  private final int n;
  private final int position;
  private final long step;
  private final int examples;
  private final boolean leaving;
  private final Consumer<RingChunk> next;
  private final Bucket[] buckets;
  private final long[] ownMark;
  private long[] marks = RingChunk.NO_MARKS;
  private final List<RingChunk> early = new ArrayList<>();
  private int bucketsDone;
  private int totalExamples = -1;
  private boolean anyLeaving;

  /**
   * Member {@code position} of a ring of {@code members}, for step {@code step} over
   * {@code bucketCount} buckets; it contributes its gradients weighted by {@code examples} (0: none)
   * and sends what goes to the next member to {@code next}.
   */
  public StepReduction(int members, int position, long step, int bucketCount, int examples, boolean leaving,
      Consumer<RingChunk> next) {
    this(members, position, step, bucketCount, examples, leaving, null, next);
  }

  /**
   * The same, with this member's task mark {@code {task epoch, task, offset after}} (null: no data
   * this step).
   */
  public StepReduction(int members, int position, long step, int bucketCount, int examples, boolean leaving,
      long[] taskMark, Consumer<RingChunk> next) {
    if (members < 1 || position < 0 || position >= members) {
      throw new IllegalArgumentException("position " + position + " in a ring of " + members);
    }
    if (examples < 0) throw new IllegalArgumentException("examples must be >= 0, not " + examples);
    this.n = members;
    this.position = position;
    this.step = step;
    this.examples = examples;
    this.leaving = leaving;
    this.next = next;
    this.buckets = new Bucket[bucketCount];
    if (taskMark != null && taskMark.length != MARK - 1) {
      throw new IllegalArgumentException("a task mark is {epoch, task, offset}, not " + taskMark.length + " longs");
    }
    this.ownMark = taskMark == null ? RingChunk.NO_MARKS
        : new long[] {position, taskMark[0], taskMark[1], taskMark[2]};
  }

  public long step() {
    return step;
  }

  /**
   * Starts bucket {@code bucket} on {@code gradient}: this member's gradient (ignored, but still
   * where the mean goes, when the member has no examples). The array is this reduction's until
   * {@link #done()}.
   */
  public void start(int bucket, float[] gradient) {
    start(bucket, gradient, 0, gradient.length);
  }

  /** {@link #start(int, float[])} on the bucket {@code gradient[offset, offset + length)}. */
  public void start(int bucket, float[] gradient, int offset, int length) {
    if (buckets[bucket] != null) throw new IllegalStateException("bucket " + bucket + " of step " + step + " started twice");
    if (offset < 0 || length < 0 || offset > gradient.length - length) {
      throw new IllegalArgumentException("bucket [" + offset + ", " + offset + " + " + length + ") of an array of "
          + gradient.length);
    }
    Bucket b = new Bucket(bucket, gradient, offset, length);
    buckets[bucket] = b;
    if (n == 1) {
      // Alone: the mean of one batch's mean gradient is that gradient, with no rounding.
      if (bucket == MARK_BUCKET) marks = ownMark;
      finished(b, examples, leaving);
      return;
    }
    next.accept(new RingChunk(step, bucket, 0, examples, leaving, weighted(gradient, chunk(b, position), null),
        bucket == MARK_BUCKET ? ownMark : RingChunk.NO_MARKS));
    List<RingChunk> waiting = new ArrayList<>();
    early.removeIf(c -> c.bucket() == bucket && waiting.add(c));
    for (RingChunk c : waiting) take(b, c);
  }

  /** Takes in what the previous member sent for this step. */
  public void received(RingChunk c) {
    if (c.step() != step) throw new IllegalArgumentException("chunk of step " + c.step() + " in step " + step);
    if (c.bucket() < 0 || c.bucket() >= buckets.length || c.phase() < 0 || c.phase() > 2 * n - 3) {
      throw new IllegalArgumentException("chunk of bucket " + c.bucket() + ", phase " + c.phase() + " in a step of "
          + buckets.length + " buckets over " + n + " members");
    }
    Bucket b = buckets[c.bucket()];
    if (b == null) {
      early.add(c);
    } else {
      take(b, c);
    }
  }

  private void take(Bucket b, RingChunk c) {
    int p = c.phase();
    if (p < n - 1) {
      int chunk = Math.floorMod(position - 1 - p, n);
      int[] range = chunk(b, chunk);
      int ex = c.examples() + examples;
      boolean lv = c.leaving() || leaving;
      long[] mk = b.index == MARK_BUCKET ? concat(c.marks(), ownMark) : RingChunk.NO_MARKS;
      if (p < n - 2) {
        next.accept(new RingChunk(step, b.index, p + 1, ex, lv, weighted(b.gradient, range, c.values()), mk));
        return;
      }
      // The whole sum of this member's own chunk: its mean goes round the ring.
      float[] mean = mean(b.gradient, range, c.values(), ex);
      System.arraycopy(mean, 0, b.gradient, range[0], mean.length);
      if (b.index == MARK_BUCKET) marks = mk;
      next.accept(new RingChunk(step, b.index, n - 1, ex, lv, mean, mk));
      chunkIn(b, ex, lv);
    } else {
      int k = p - (n - 1);
      int[] range = chunk(b, Math.floorMod(position - k, n));
      System.arraycopy(c.values(), 0, b.gradient, range[0], range[1] - range[0]);
      if (b.index == MARK_BUCKET) marks = c.marks();
      // The array is never changed after it was sent, so it goes on as it is.
      if (k < n - 2) {
        next.accept(new RingChunk(step, b.index, p + 1, c.examples(), c.leaving(), c.values(), c.marks()));
      }
      chunkIn(b, c.examples(), c.leaving());
    }
  }

  private void chunkIn(Bucket b, int ex, boolean lv) {
    if (++b.chunksIn == n) finished(b, ex, lv);
  }

  private void finished(Bucket b, int ex, boolean lv) {
    b.done = true;
    bucketsDone++;
    totalExamples = ex;
    anyLeaving = lv;
  }

  /**
   * {@code sum} (empty: nothing yet) plus this member's gradient over {@code range}, weighted by its
   * examples, in a new array; empty while both are nothing.
   */
  private float[] weighted(float[] gradient, int[] range, float[] sum) {
    int len = range[1] - range[0];
    boolean has = sum != null && sum.length > 0;
    if (examples == 0) return has ? sum : new float[0];
    if (has && sum.length != len) {
      throw new IllegalArgumentException("a chunk of " + sum.length + " floats where " + len + " belong");
    }
    float w = examples;
    float[] out = new float[len];
    int off = range[0];
    if (has) {
      for (int j = 0; j < len; j++) out[j] = sum[j] + w * gradient[off + j];
    } else {
      for (int j = 0; j < len; j++) out[j] = w * gradient[off + j];
    }
    return out;
  }

  /**
   * {@code (sum + examples * gradient) / total} over {@code range}, in one pass, in a new array;
   * zeros when the step has no examples.
   */
  private float[] mean(float[] gradient, int[] range, float[] sum, int total) {
    int len = range[1] - range[0];
    float[] mean = new float[len];
    if (total == 0) return mean;
    boolean has = sum.length > 0;
    if (has && sum.length != len) {
      throw new IllegalArgumentException("a chunk of " + sum.length + " floats where " + len + " belong");
    }
    float w = examples;
    float t = total;
    int off = range[0];
    if (examples == 0) {
      for (int j = 0; j < len; j++) mean[j] = sum[j] / t;
    } else if (has) {
      for (int j = 0; j < len; j++) mean[j] = (sum[j] + w * gradient[off + j]) / t;
    } else {
      for (int j = 0; j < len; j++) mean[j] = w * gradient[off + j] / t;
    }
    return mean;
  }

  private static long[] concat(long[] a, long[] b) {
    if (a.length == 0) return b;
    if (b.length == 0) return a;
    long[] out = new long[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Chunk {@code c} of a bucket as [from, to): the bucket cut into {@code n} nearly equal parts. */
  private int[] chunk(Bucket b, int c) {
    long len = b.length;
    return new int[] {b.offset + (int) (c * len / n), b.offset + (int) ((c + 1) * len / n)};
  }

  public boolean bucketDone(int bucket) {
    return buckets[bucket] != null && buckets[bucket].done;
  }

  /** Whether every bucket holds the step's mean gradient. */
  public boolean done() {
    return bucketsDone == buckets.length;
  }

  /** The examples of every member's batch together; once {@link #done()}. */
  public int totalExamples() {
    if (!done()) throw new IllegalStateException("step " + step + " is not reduced yet");
    return totalExamples;
  }

  /** Whether some member wants the ring to stop after this step; once {@link #done()}. */
  public boolean leaving() {
    if (!done()) throw new IllegalStateException("step " + step + " is not reduced yet");
    return anyLeaving;
  }

  /**
   * The task marks of every member that had data this step, {@value #MARK} longs each (ring
   * position, task epoch, task, offset after), in no particular order; once {@link #done()}.
   */
  public long[] marks() {
    if (!done()) throw new IllegalStateException("step " + step + " is not reduced yet");
    return marks;
  }

  private static final class Bucket {
    final int index;
    final float[] gradient;
    final int offset;
    final int length;
    int chunksIn;
    boolean done;

    Bucket(int index, float[] gradient, int offset, int length) {
      this.index = index;
      this.gradient = gradient;
      this.offset = offset;
      this.length = length;
    }
  }
}
