package io.shardtrain.actors.sparse;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.RecipientRef;
import akka.actor.typed.Scheduler;
import akka.actor.typed.javadsl.AskPattern;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.PullReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.Refused;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.actors.transport.Departures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * How a trainer pulls and pushes a batch's rows of one sparse table: the batch's ids are routed
 * to their shards ({@link BatchRouting}), each shard asked for its ids once, and the answers
 * gathered back into batch order; a batch's gradient rows are summed per id and cut per shard.
 * In sync mode every shard gets the trainer's push each step (without rows when the batch has
 * none of its ids, but with the batch's weight, which the shard's mean divides by). The futures
 * complete on the threads the shards' answers arrive on ({@link Asks}); an actor pipes them to
 * itself. A shard's {@link Refused} fails the future with {@link ShardRefused}; a timeout with Akka's; a
 * node's removal with {@link io.shardtrain.actors.transport.PeerGone}.
 */
public final class SparseClient {

  /** A shard refused a request; nothing of it was applied on that shard. */
  public static final class ShardRefused extends RuntimeException {
    private final transient Refused refused;

    ShardRefused(String shard, Refused refused) {
      super("shard " + shard + " refused: " + refused.problem() + ": " + refused.message());
      this.refused = refused;
    }

    public Refused refused() {
      return refused;
    }
  }

  /** The rows of a batch, one per position ({@code dim} floats each), and the lowest version of the shards that answered. */
  public record Pulled(float[] rows, long version) {}

  private final TableSpec spec;
  private final String trainerId;
  private final Duration timeout;
  private final Scheduler scheduler;
  private final IntFunction<RecipientRef<Command>> shards;
  /** Null: a pull asks each shard once. */
  private final Duration resendAfter;
  /** Null without a cluster: then nothing fails a request before its timeout. */
  private final Departures departures;

  /**
   * A client of table {@code spec} for trainer {@code trainerId}, through Cluster Sharding. A
   * request waiting when the cluster removes a node fails with {@link
   * io.shardtrain.actors.transport.PeerGone}, as it may have gone to that node's shard region.
   */
  public SparseClient(ActorSystem<?> system, TableSpec spec, String trainerId, Duration timeout) {
    this(system, spec, trainerId, timeout, null);
  }

  /**
   * The same, asking a shard again when its answer to a pull lags the other shards' by {@code
   * resendAfter} (null: never), as a trainer does its blocks' ({@link LaggingShardPull}).
   */
  public SparseClient(ActorSystem<?> system, TableSpec spec, String trainerId, Duration timeout, Duration resendAfter) {
    this(spec, trainerId, timeout, system.scheduler(), s -> SparseShard.entityRef(system, spec.entityId(s)),
        Departures.get(system), resendAfter);
  }

  /** A client whose shard {@code s} is {@code shards.apply(s)}, whose requests only time out. */
  public SparseClient(TableSpec spec, String trainerId, Duration timeout, Scheduler scheduler,
      IntFunction<RecipientRef<Command>> shards) {
    this(spec, trainerId, timeout, scheduler, shards, null, null);
  }

  private SparseClient(TableSpec spec, String trainerId, Duration timeout, Scheduler scheduler,
      IntFunction<RecipientRef<Command>> shards, Departures departures, Duration resendAfter) {
    this.resendAfter = resendAfter;
    this.spec = spec;
    this.trainerId = trainerId;
    this.timeout = timeout;
    this.scheduler = scheduler;
    this.shards = shards;
    this.departures = departures;
  }

  /** The rows of {@code ids} (repeats included, in batch order) once every shard asked is at {@code minVersion}. */
  public CompletionStage<Pulled> pull(long[] ids, long minVersion) {
    return pull(route(ids), minVersion);
  }

  /** Where {@code ids} go; ids outside the table are refused. One routing serves a batch's pull and its push. */
  public BatchRouting route(long[] ids) {
    return BatchRouting.of(spec, ids);
  }

  /** Where {@code ids} go when they are distinct already (a batch's rows, each once): {@link #route} without the hashing. */
  public BatchRouting routeDistinct(long[] ids) {
    return BatchRouting.ofDistinct(spec, ids);
  }

  /**
   * The rows of a routed batch, as {@link #pull(long[], long)}; with a resend wait, a shard whose
   * answer lags the others' by it is asked again ({@link LaggingShardPull}).
   */
  public CompletionStage<Pulled> pull(BatchRouting routing, long minVersion) {
    int[] asked = IntStream.range(0, routing.shards()).filter(s -> routing.ids(s).length > 0).toArray();
    LaggingShardPull pull = new LaggingShardPull(asked.length, i -> answerOf(AskPattern.<Command, PullReply>ask(
        shards.apply(asked[i]), r -> new SparseProtocol.PullRows(routing.ids(asked[i]), minVersion, r), timeout,
        scheduler)).thenApply(reply -> rows(asked[i], reply)), resendAfter, scheduler);
    List<CompletableFuture<Rows>> answers = new ArrayList<>();
    for (int s = 0, i = 0; s < routing.shards(); s++) {
      answers.add(i < asked.length && asked[i] == s ? pull.answer(i++)
          : CompletableFuture.completedFuture(new Rows(spec.name(), s, Long.MAX_VALUE, new long[0], new float[0])));
    }
    return CompletableFuture.allOf(answers.toArray(new CompletableFuture[0])).thenApply(done -> {
      float[][] rows = new float[answers.size()][];
      long version = Long.MAX_VALUE;
      for (int s = 0; s < rows.length; s++) {
        Rows r = answers.get(s).join();
        rows[s] = r.values();
        version = Math.min(version, r.version());
      }
      return new Pulled(routing.gather(rows), version);
    });
  }

  /** {@code stage}'s answer on the thread it arrives on, or {@link io.shardtrain.actors.transport.PeerGone} at a removal. */
  private <T> CompletableFuture<T> answerOf(CompletionStage<T> stage) {
    CompletableFuture<T> reply = new CompletableFuture<>();
    if (departures != null) departures.failIfAnyRemoved(reply);
    return Asks.completeOnArrival(stage, reply);
  }

  private Rows rows(int shard, PullReply reply) {
    if (reply instanceof Refused r) throw new ShardRefused(spec.entityId(shard), r);
    return (Rows) reply;
  }

  /**
   * Pushes the gradient rows {@code grads} of the batch {@code ids} ({@code dim} floats per position)
   * for {@code step}, from {@code weight} examples computed on version {@code baseVersion}; the
   * shards' answers, by shard (null for a shard an async push had nothing for). The same request
   * again is a duplicate the shards acknowledge without applying.
   */
  public CompletionStage<List<PushReply>> push(long step, long baseVersion, float weight, long[] ids, float[] grads) {
    return push(step, baseVersion, weight, route(ids), grads);
  }

  /** The gradient rows of a routed batch, as {@link #push(long, long, float, long[], float[])}. */
  public CompletionStage<List<PushReply>> push(long step, long baseVersion, float weight, BatchRouting routing,
      float[] grads) {
    boolean sync = spec.mode() == TableSpec.Mode.SYNC;
    List<CompletableFuture<PushReply>> asked = new ArrayList<>();
    for (int s = 0; s < routing.shards(); s++) {
      long[] mine = routing.ids(s);
      if (mine.length == 0 && !sync) {
        asked.add(CompletableFuture.completedFuture(null));
        continue;
      }
      float[] g = routing.scatter(grads, s);
      int shard = s;
      asked.add(answerOf(AskPattern.<Command, PushReply>ask(shards.apply(s),
          r -> new SparseProtocol.PushRows(trainerId, step, baseVersion, weight, mine, g, r), timeout, scheduler))
          .thenApply(reply -> {
            if (reply instanceof Refused r) throw new ShardRefused(spec.entityId(shard), r);
            return reply;
          }));
    }
    return CompletableFuture.allOf(asked.toArray(new CompletableFuture[0])).thenApply(done -> {
      List<PushReply> replies = new ArrayList<>(asked.size());
      for (CompletableFuture<PushReply> f : asked) replies.add(f.join());
      return replies;
    });
  }
}
