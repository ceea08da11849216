package io.shardtrain.actors;

import akka.actor.typed.ActorSystem;
import io.shardtrain.actors.sparse.RowsExport;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.persistence.model.TableValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Loads a saved model's rows into a fresh table before its job starts: each row goes to the shard
 * its id belongs to, in pages that fit a cluster frame (the shard journals a page in events under
 * its byte limit); the shards load at once, each its pages one after another. Loading again
 * changes nothing (same rows, same values).
 */
final class TableLoad {
  private TableLoad() {}

  static CompletionStage<Void> load(ActorSystem<?> system, TableSpec table, TableValues rows, Duration timeout) {
    int dim = table.dim();
    int[] counts = new int[table.shards()];
    for (long id : rows.ids()) counts[table.shardOf(id)]++;
    long[][] ids = new long[table.shards()][];
    float[][] values = new float[table.shards()][];
    for (int s = 0; s < ids.length; s++) {
      ids[s] = new long[counts[s]];
      values[s] = new float[counts[s] * dim];
    }
    int[] at = new int[table.shards()];
    for (int r = 0; r < rows.rows(); r++) {
      int s = table.shardOf(rows.ids()[r]);
      ids[s][at[s]] = rows.ids()[r];
      System.arraycopy(rows.values(), r * dim, values[s], at[s] * dim, dim);
      at[s]++;
    }
    int page = RowsExport.pageRows(dim);
    List<CompletableFuture<Void>> shards = new ArrayList<>();
    for (int s = 0; s < ids.length; s++) {
      shards.add(pages(system, table.entityId(s), ids[s], values[s], dim, 0, page, timeout).toCompletableFuture());
    }
    return CompletableFuture.allOf(shards.toArray(CompletableFuture[]::new));
  }

  /** Shard {@code entityId}'s rows from {@code from} on, a page at a time. */
  private static CompletionStage<Void> pages(ActorSystem<?> system, String entityId, long[] ids, float[] values, int dim,
      int from, int page, Duration timeout) {
    if (from >= ids.length) return CompletableFuture.completedFuture(null);
    int to = Math.min(ids.length, from + page);
    long[] pageIds = Arrays.copyOfRange(ids, from, to);
    float[] pageValues = Arrays.copyOfRange(values, from * dim, to * dim);
    return SparseShard.entityRef(system, entityId).<SparseProtocol.LoadReply>ask(
            replyTo -> new SparseProtocol.LoadRows(pageIds, pageValues, replyTo), timeout)
        .thenCompose(reply -> {
          if (reply instanceof SparseProtocol.Refused r) {
            throw new IllegalStateException("table shard " + entityId + " refused the saved rows: " + r.message());
          }
          return pages(system, entityId, ids, values, dim, to, page, timeout);
        });
  }
}
