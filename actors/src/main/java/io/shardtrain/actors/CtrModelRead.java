package io.shardtrain.actors;

import akka.actor.typed.ActorSystem;
import io.shardtrain.actors.job.CtrModel;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.sparse.RowsExport;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A click-through job's model as its blocks and table shards hold it ({@link ShardTrain#ctrModel}):
 * the dense part's blocks pulled, every shard's stored rows read page by page in id order and
 * merged. Meant for a job that no longer trains (done or cancelled): the pages of a training
 * shard would come from different steps.
 */
final class CtrModelRead {
  private final ActorSystem<?> system;
  private final BlockPulls pulls;
  private final Duration timeout;

  CtrModelRead(ActorSystem<?> system, BlockPulls pulls, Duration timeout) {
    this.system = system;
    this.pulls = pulls;
    this.timeout = timeout;
  }

  CompletionStage<ModelSnapshot> read(JobSpec job) {
    CtrModel ctr = job.ctr();
    if (ctr == null) throw new IllegalArgumentException("job " + job.jobId() + " trains an MLP, not a click-through model");
    List<CompletableFuture<BlockProtocol.BlockValues>> blocks = new ArrayList<>();
    for (BlockSlice slice : job.denseLayout()) blocks.add(pulls.pull(slice.entityId(), 0).toCompletableFuture());
    TableSpec table = job.table();
    List<CompletableFuture<List<SparseProtocol.RowsPage>>> shards = new ArrayList<>();
    for (int s = 0; s < table.shards(); s++) {
      shards.add(pages(table.entityId(s), -1, RowsExport.pageRows(table.dim()), new ArrayList<>()).toCompletableFuture());
    }
    List<CompletableFuture<?>> all = new ArrayList<>(blocks);
    all.addAll(shards);
    return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply(x -> {
      float[] dense = new float[ctr.machine().denseSize()];
      long version = Long.MAX_VALUE;
      for (CompletableFuture<BlockProtocol.BlockValues> b : blocks) {
        BlockProtocol.BlockValues v = b.join();
        System.arraycopy(v.values(), 0, dense, v.offset(), v.values().length);
        version = Math.min(version, v.version());
      }
      int dim = table.dim();
      List<List<SparseProtocol.RowsPage>> read = shards.stream().map(CompletableFuture::join).toList();
      Merged rows = merge(read, dim);
      return ctr.snapshot(job.jobId(), job.dataset(), job.seed(), job.optimizer(), version, dense, rows.ids(),
          rows.values());
    });
  }

  /** Shard {@code entityId}'s pages from the one after id {@code after} on, added to {@code pages}. */
  private CompletionStage<List<SparseProtocol.RowsPage>> pages(String entityId, long after, int limit,
      List<SparseProtocol.RowsPage> pages) {
    return SparseShard.entityRef(system, entityId).<SparseProtocol.ExportReply>ask(
            replyTo -> new SparseProtocol.ExportRows(after, limit, replyTo), timeout)
        .thenCompose(reply -> {
          if (reply instanceof SparseProtocol.Refused r) {
            throw new IllegalStateException("table shard " + entityId + " refused to give its rows: " + r.message());
          }
          SparseProtocol.RowsPage page = (SparseProtocol.RowsPage) reply;
          pages.add(page);
          if (!page.more() || page.ids().length == 0) return CompletableFuture.completedFuture(pages);
          return pages(entityId, page.ids()[page.ids().length - 1], limit, pages);
        });
  }

  /** Rows of {@code dim} values, ids ascending. */
  record Merged(long[] ids, float[] values) {}

  /** Every shard's rows in one ascending order: each shard's pages ascend, and no id is in two shards. */
  static Merged merge(List<List<SparseProtocol.RowsPage>> shards, int dim) {
    int total = 0;
    List<SparseProtocol.RowsPage> runs = new ArrayList<>();
    for (List<SparseProtocol.RowsPage> pages : shards) {
      for (SparseProtocol.RowsPage p : pages) {
        total += p.ids().length;
        if (p.ids().length > 0) runs.add(p);
      }
    }
    long[] ids = new long[total];
    float[] values = new float[total * dim];
    // Cursors into the runs by their next id: a page's rows ascend, and a shard's pages follow each other.
    PriorityQueue<int[]> next = new PriorityQueue<>((a, b) -> Long.compare(runs.get(a[0]).ids()[a[1]],
        runs.get(b[0]).ids()[b[1]]));
    for (int r = 0; r < runs.size(); r++) next.add(new int[] {r, 0});
    for (int n = 0; n < total; n++) {
      int[] c = next.poll();
      SparseProtocol.RowsPage p = runs.get(c[0]);
      ids[n] = p.ids()[c[1]];
      System.arraycopy(p.values(), c[1] * dim, values, n * dim, dim);
      if (++c[1] < p.ids().length) next.add(c);
    }
    return new Merged(ids, values);
  }
}
