package io.shardtrain.actors.sparse;

import io.shardtrain.compute.metrics.AucHistogram;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.nn.FmBatch;
import io.shardtrain.compute.sparse.BatchRows;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A trainer's factorization-machine steps against a sparse table: each batch's distinct ids are
 * pulled once ({@link #fetch}), the step computed on them ({@link Fetched#compute}), and one summed
 * gradient per distinct row pushed with the batch's size as its weight ({@link Fetched#push}), so a
 * sync shard's weighted mean is the gradient of the mean loss over every trainer's examples.
 *
 * <p>The rows of the next batch may be fetched while the current one computes: each fetch has
 * buffers of its own, reused two fetches later, so at most two batches may be in flight. In sync
 * mode the next batch's pull asks for the version after this step's, which the shards answer once
 * the step is applied; in async mode it may ask for any version, and the overlap is real.
 * Counts the payload bytes it sends and receives (ids 8 bytes, floats 4), not the wire's framing.
 */
public final class FmSparseStep {
  private final FactorizationMachine fm;
  private final SparseClient client;
  private final FmBatch[] buffers;
  private int next;
  private long pullBytes;
  private long pushBytes;
  private long examples;

  public FmSparseStep(FactorizationMachine fm, SparseClient client) {
    this.fm = fm;
    this.client = client;
    this.buffers = new FmBatch[] {new FmBatch(fm), new FmBatch(fm)};
  }

  /** A batch whose rows have arrived. */
  public final class Fetched {
    private final FmBatch batch;
    private final long[] ids;
    private final BatchRouting routing;
    private final long version;
    private final int n;

    private Fetched(FmBatch batch, long[] ids, BatchRouting routing, long version, int n) {
      this.batch = batch;
      this.ids = ids;
      this.routing = routing;
      this.version = version;
      this.n = n;
    }

    /** The lowest version of the shards that answered the pull. */
    public long version() {
      return version;
    }

    /** Distinct rows of the batch. */
    public int distinctRows() {
      return ids.length;
    }

    /** Forward, loss and backward on the fetched rows; returns the mean loss, writes {@code denseGrad}. */
    public double compute(float[] x, float[] labels, float[] dense, float[] denseGrad) {
      return batch.trainStep(x, labels, dense, denseGrad);
    }

    /** Pushes the rows' gradients of the last {@link #compute} as {@code step}, computed on {@code baseVersion}. */
    public CompletionStage<List<SparseProtocol.PushReply>> push(long step, long baseVersion) {
      float[] grads = Arrays.copyOf(batch.rowGrad(), ids.length * fm.rowWidth());
      count(0, 8L * ids.length + 4L * grads.length, n);
      return client.push(step, baseVersion, n, routing, grads);
    }
  }

  /**
   * A sync step without data (or with a batch the table holds already): every shard gets an empty
   * push of weight 0, so its barrier does not wait for this trainer.
   */
  public CompletionStage<List<SparseProtocol.PushReply>> pushNothing(long step, long baseVersion) {
    return client.push(step, baseVersion, 0f, new long[0], new float[0]);
  }

  /** Pulls the distinct rows of {@code n} examples' ids ({@code n * fields}) at {@code minVersion} or later. */
  public CompletionStage<Fetched> fetch(int[] exampleIds, int n, long minVersion) {
    FmBatch batch = buffers[next];
    next = 1 - next;
    batch.index(exampleIds, n);
    BatchRows rows = batch.rowIds();
    long[] ids = rows.ids();
    int width = fm.rowWidth();
    count(8L * ids.length, 0, 0);
    BatchRouting routing = client.routeDistinct(ids);
    return client.pull(routing, minVersion).thenApply(pulled -> {
      float[] values = pulled.rows();
      System.arraycopy(values, 0, batch.rows(), 0, ids.length * width);
      count(4L * values.length, 0, 0);
      return new Fetched(batch, ids, routing, pulled.version(), n);
    });
  }

  /**
   * Predicts examples {@code [0, n)} (ids {@code n * fields}, dense {@code n * denseDim}) on the rows at
   * {@code minVersion} or later, {@code chunk} examples per pull, and counts them into a new
   * histogram of {@code bins} bins: this trainer's share of a global AUC, to be merged with the
   * others' ({@link io.shardtrain.compute.metrics.AucHistogram#merge}). Uses buffers of its own.
   */
  public CompletionStage<AucHistogram> evaluate(int[] exampleIds, float[] x, float[] labels, int n, float[] dense,
      int bins, long minVersion, int chunk) {
    AucHistogram histogram = new AucHistogram(bins);
    FmBatch batch = new FmBatch(fm);
    CompletionStage<AucHistogram> done = CompletableFuture.completedFuture(histogram);
    for (int from = 0; from < n; from += chunk) {
      int start = from;
      int m = Math.min(chunk, n - from);
      done = done.thenCompose(h -> {
        batch.index(Arrays.copyOfRange(exampleIds, start * fm.fields(), (start + m) * fm.fields()), m);
        long[] ids = batch.rowIds().ids();
        return client.pull(ids, minVersion).thenApply(pulled -> {
          System.arraycopy(pulled.rows(), 0, batch.rows(), 0, ids.length * fm.rowWidth());
          float[] probs = new float[m];
          batch.predict(Arrays.copyOfRange(x, start * fm.denseDim(), (start + m) * fm.denseDim()), dense, probs);
          h.add(probs, Arrays.copyOfRange(labels, start, start + m));
          return h;
        });
      });
    }
    return done;
  }

  private synchronized void count(long pulled, long pushed, long pushedExamples) {
    pullBytes += pulled;
    pushBytes += pushed;
    examples += pushedExamples;
  }

  /** Payload bytes of pulls (ids sent, rows received) per example pushed so far; NaN before the first push. */
  public synchronized double pullBytesPerExample() {
    return examples == 0 ? Double.NaN : (double) pullBytes / examples;
  }

  /** Payload bytes of pushes (ids and gradient rows) per example pushed so far; NaN before the first push. */
  public synchronized double pushBytesPerExample() {
    return examples == 0 ? Double.NaN : (double) pushBytes / examples;
  }
}
