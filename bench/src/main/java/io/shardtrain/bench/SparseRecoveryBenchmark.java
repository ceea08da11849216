package io.shardtrain.bench;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.ShardStats;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.persistence.journal.JournalSettings;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How long a sparse table shard of {@code rows} rows takes to come back on a new node: one async
 * shard (AdaGrad, rows of {@code dim} floats) gets its rows from pushes of {@code batch} new ids
 * each, takes a chunked snapshot after them (the header in the snapshot store, the rows in events
 * of at most {@code maxEventBytes}), then gets {@code extra} more pushes updating rows; its
 * ActorSystem stops without a goodbye, and a new one on the same journal recovers the shard
 * (header, row chunks, the pushes after them) for its first pull, which is timed.
 */
public final class SparseRecoveryBenchmark {
  private static final Duration TIMEOUT = Duration.ofMinutes(10);

  private SparseRecoveryBenchmark() {}

  /** One measurement; {@code journal} is the journal's kind. */
  public record Result(int rows, int dim, long rowsRecovered, long eventsReplayed, double recoverySeconds,
      double fillSeconds, String journal) {

    public String summary() {
      return String.format(Locale.ROOT,
          "recovery of a sparse shard of %d rows of %d floats (adagrad): %.2f s (%d events replayed: row chunks and "
              + "the pushes after the snapshot; %s journal; creating the rows took %.1f s)",
          rowsRecovered, dim, recoverySeconds, eventsReplayed, journal, fillSeconds);
    }
  }

  public static Result run(int rows, int dim, int batch, int extra, int maxEventBytes, Config journal) {
    if (rows < 1 || dim < 1 || batch < 1 || extra < 0) {
      throw new IllegalArgumentException("rows, dim and batch must be at least 1 and extra at least 0, got " + rows
          + ", " + dim + ", " + batch + ", " + extra);
    }
    int pushes = (rows + batch - 1) / batch;
    TableSpec spec = TableSpec.of("recovery" + Long.toString(System.nanoTime(), 36), 1, 1L << 40, dim,
            new RowInit(RowInit.Kind.UNIFORM, 0.01f, 42), RowOptimizer.adagrad(0.05f, 0.1f))
        .withMode(TableSpec.Mode.ASYNC, -1);
    // One snapshot, right after the rows were created: the Initialized event and the pushes.
    int snapshotEvery = pushes + 1;
    ActorSystem<Void> first = node(journal, snapshotEvery, maxEventBytes);
    double fillSeconds;
    String kind;
    try {
      EntityRef<Command> shard = SparseShard.entityRef(first, spec.entityId(0));
      get(shard.<SparseProtocol.InitReply>ask(r -> new SparseProtocol.InitShard(spec, 0, r), TIMEOUT));
      long t0 = System.nanoTime();
      long step = 0;
      for (int p = 0; p < pushes + extra; p++) {
        int n = p < pushes ? Math.min(batch, rows - p * batch) : batch;
        long[] ids = new long[n];
        // New ids while filling, then the first batch's again.
        for (int k = 0; k < n; k++) ids[k] = p < pushes ? (long) p * batch + k : k;
        float[] grads = new float[n * dim];
        for (int k = 0; k < grads.length; k++) grads[k] = 1e-3f * ((k % 7) - 3);
        long s = ++step;
        Object reply = get(shard.<SparseProtocol.PushReply>ask(
            r -> new SparseProtocol.PushRows("bench", s, s - 1, n, ids, grads, r), TIMEOUT));
        if (!(reply instanceof SparseProtocol.Applied)) throw new IllegalStateException("push " + s + ": " + reply);
        if (p == pushes - 1) awaitSnapshot(shard);
      }
      fillSeconds = (System.nanoTime() - t0) / 1e9;
      kind = JournalSettings.create(first).kind().name().toLowerCase(Locale.ROOT);
    } finally {
      stop(first);
    }
    ActorSystem<Void> second = node(journal, snapshotEvery, maxEventBytes);
    try {
      EntityRef<Command> shard = SparseShard.entityRef(second, spec.entityId(0));
      long t0 = System.nanoTime();
      Object pulled = get(shard.<SparseProtocol.PullReply>ask(
          r -> new SparseProtocol.PullRows(new long[] {0, rows - 1}, pushes + extra, r), TIMEOUT));
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (!(pulled instanceof SparseProtocol.Rows)) throw new IllegalStateException("pull after recovery: " + pulled);
      ShardStats stats = get(shard.ask(SparseProtocol.GetStats::new, TIMEOUT));
      if (stats.rows() != rows) {
        throw new IllegalStateException("the shard recovered " + stats.rows() + " rows, not " + rows);
      }
      return new Result(rows, dim, stats.rows(), stats.eventsReplayed(), seconds, fillSeconds, kind);
    } finally {
      stop(second);
    }
  }

  private static void awaitSnapshot(EntityRef<Command> shard) {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (get(shard.ask(SparseProtocol.GetStats::new, TIMEOUT)).snapshots() < 1) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the shard took no snapshot");
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  private static <T> T get(java.util.concurrent.CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("sparse recovery benchmark: the shard did not answer: " + e, e);
    }
  }

  private static ActorSystem<Void> node(Config journal, int snapshotEvery, int maxEventBytes) {
    Config base = ConfigFactory.parseMap(Map.of(
            "shardtrain.sparse.snapshot-every", snapshotEvery,
            "shardtrain.sparse.max-event-bytes", maxEventBytes,
            "akka.loglevel", "WARNING",
            "akka.cluster.roles", List.of(SparseShard.ROLE),
            "akka.remote.artery.canonical.hostname", "127.0.0.1",
            "akka.remote.artery.canonical.port", 0,
            "akka.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"))
        .withFallback(journal)
        .withFallback(ConfigFactory.parseResources("cluster.conf"))
        .withFallback(ConfigFactory.load());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "sparse-recovery-bench", JournalConfig.of(base));
    try {
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
      Journal.start(system);
      SparseShard.init(system);
      return system;
    } catch (RuntimeException e) {
      stop(system);
      throw e;
    }
  }

  private static void stop(ActorSystem<?> system) {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("sparse recovery benchmark: ActorSystem did not stop: " + e, e);
    }
  }
}
