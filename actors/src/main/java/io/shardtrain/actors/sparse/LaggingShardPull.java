package io.shardtrain.actors.sparse;

import akka.actor.Cancellable;
import akka.actor.typed.Scheduler;
import akka.dispatch.ExecutionContexts;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import io.shardtrain.actors.transport.AnswerLag;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * One batch's pull across a table's shards that asks a shard again when its answer lags the other
 * shards' ({@link AnswerLag}: by {@code resendAfter}, then twice the last wait, up to 16 times):
 * Cluster Sharding drops the requests it holds for a shard whose hand-off begins, and nothing else
 * answers them before the ask's timeout. A pull is a read, so an answer to a needless second
 * request changes nothing; the shard's future takes the first answer, and fails only when every
 * request to that shard failed.
 */
final class LaggingShardPull {
  private final IntFunction<CompletableFuture<Rows>> ask;
  private final List<CompletableFuture<Rows>> answers = new ArrayList<>();
  private final int[] inFlight;
  private final long after;
  private final AnswerLag lag;
  private final LongSupplier clock;
  private Cancellable ticks;

  /**
   * Asks each of {@code shards} ({@code ask.apply(s)}, a new request each call); {@code
   * resendAfter} null: each shard once, as a plain pull.
   */
  LaggingShardPull(int shards, IntFunction<CompletableFuture<Rows>> ask, Duration resendAfter, Scheduler scheduler) {
    this(shards, ask, resendAfter, scheduler, System::nanoTime);
  }

  /** The same, reading the time from {@code clock} (nanoseconds). */
  LaggingShardPull(int shards, IntFunction<CompletableFuture<Rows>> ask, Duration resendAfter, Scheduler scheduler,
      LongSupplier clock) {
    this.ask = ask;
    this.clock = clock;
    this.lag = new AnswerLag(clock);
    this.inFlight = new int[shards];
    this.after = resendAfter == null ? 0 : resendAfter.toNanos();
    for (int s = 0; s < shards; s++) answers.add(new CompletableFuture<>());
    for (int s = 0; s < shards; s++) send(s);
    if (resendAfter != null && shards > 1) {
      Duration every = resendAfter.dividedBy(2);
      synchronized (this) {
        if (!allSettled()) {
          // The check is a few comparisons: it runs on the scheduler's thread.
          ticks = scheduler.scheduleAtFixedRate(every, every, this::tick, ExecutionContexts.fromExecutor(Runnable::run));
        }
      }
    }
  }

  /** Shard {@code s}'s answer. */
  CompletableFuture<Rows> answer(int s) {
    return answers.get(s);
  }

  private void send(int s) {
    synchronized (this) {
      inFlight[s]++;
    }
    ask.apply(s).whenComplete((rows, failure) -> settled(s, rows, failure));
  }

  private void settled(int s, Rows rows, Throwable failure) {
    CompletableFuture<Rows> answer = answers.get(s);
    boolean last;
    synchronized (this) {
      inFlight[s]--;
      last = inFlight[s] == 0;
      if (failure == null && !answer.isDone()) lag.answered();
    }
    if (failure == null) answer.complete(rows);
    else if (last) answer.completeExceptionally(failure);
    synchronized (this) {
      if (ticks != null && allSettled()) ticks.cancel();
    }
  }

  private void tick() {
    List<Integer> late = new ArrayList<>();
    synchronized (this) {
      long now = clock.getAsLong();
      if (!lag.due(now, after)) return;
      for (int s = 0; s < answers.size(); s++) {
        if (!answers.get(s).isDone()) late.add(s);
      }
      if (late.isEmpty()) return;
      lag.sentAgain(now);
    }
    late.forEach(this::send);
  }

  private boolean allSettled() {
    for (CompletableFuture<Rows> a : answers) {
      if (!a.isDone()) return false;
    }
    return true;
  }
}
