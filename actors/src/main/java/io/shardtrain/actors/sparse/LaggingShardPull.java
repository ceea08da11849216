package io.shardtrain.actors.sparse;

import akka.actor.Cancellable;
import akka.actor.typed.Scheduler;
import akka.dispatch.ExecutionContexts;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * One batch's pull across a table's shards that asks a shard again when its answer lags the other
 * shards' by {@code resendAfter}: Cluster Sharding drops the requests it holds for a shard whose
 * hand-off begins, and nothing else answers them before the ask's timeout. Each further time after
 * twice the last wait, up to 16 times {@code resendAfter}. A pull is a read, so an answer to a
 * needless second request changes nothing; the shard's future takes the first answer, and fails
 * only when every request to that shard failed.
 */
final class LaggingShardPull {
  private static final int MAX_FACTOR = 16;

  private final IntFunction<CompletableFuture<Rows>> ask;
  private final List<CompletableFuture<Rows>> answers = new ArrayList<>();
  private final int[] inFlight;
  private final long firstWait;
  private long wait;
  /** Whether a shard answered yet; then when one last did or the pull last went again (the clock's nanoseconds). */
  private boolean answered;
  private long lastEvent;
  private Cancellable ticks;
  private final LongSupplier clock;

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
    this.inFlight = new int[shards];
    this.firstWait = resendAfter == null ? 0 : resendAfter.toNanos();
    this.wait = firstWait;
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
      if (failure == null && !answer.isDone()) {
        answered = true;
        lastEvent = clock.getAsLong();
      }
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
      if (!answered || now - lastEvent < wait) return;
      for (int s = 0; s < answers.size(); s++) {
        if (!answers.get(s).isDone()) late.add(s);
      }
      if (late.isEmpty()) return;
      lastEvent = now;
      wait = Math.min(wait * 2, firstWait * MAX_FACTOR);
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
