package io.shardtrain.actors.ps;

import io.shardtrain.actors.metrics.BlockMeters;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import java.util.List;

/**
 * What a block's actor counts since it (re)started, read out as {@link BlockStats}; plain counters,
 * one owner. What the node's metrics endpoint shows of the block goes to {@link #meters}.
 */
final class BlockCounters {
  final BlockMeters meters;
  long pushes;
  long pulls;
  long duplicates;
  long rejectedStale;
  long rejectedNonFinite;
  long rejectedBadLength;
  long rejectedNotInitialised;
  long rejectedAhead;
  long rejectedMalformed;
  long skippedNonFinite;
  long pullTimeouts;
  long bulkPushes;
  long bulkPulls;
  /** Events applied, replayed ones included. */
  long eventsHandled;
  /** Events the last recovery replayed on top of its snapshot. */
  long eventsReplayed;
  /** The last error the block answered with ("" if none) and when (epoch milliseconds). */
  String lastError = "";
  long lastErrorAtMillis;

  BlockCounters(BlockMeters meters) {
    this.meters = meters;
  }

  /** Counters whose meters record nothing. */
  BlockCounters() {
    this(BlockMeters.none());
  }

  /** The event handler: applies {@code event}, timing it when it is an update (the version moves). */
  BlockState handled(BlockState state, Event event) {
    eventsHandled++;
    long version = state.version();
    long start = System.nanoTime();
    BlockState next = state.apply(event);
    if (next.version() > version) meters.applied(System.nanoTime() - start);
    return next;
  }

  /** The block answered a command with error {@code message}. */
  void failed(String message) {
    lastError = message;
    lastErrorAtMillis = System.currentTimeMillis();
  }

  /** The counters with the barrier of {@code state} and the number of waiting pulls. */
  BlockStats stats(String entityId, BlockState state, int pendingPulls) {
    boolean waiting = state.isWaiting();
    return new BlockStats(entityId, state.isInitialised(), state.version(), state.updates(), pushes, pulls, duplicates,
        rejectedStale, rejectedNonFinite, rejectedBadLength, rejectedNotInitialised, rejectedAhead, rejectedMalformed,
        skippedNonFinite, pullTimeouts, waiting ? state.version() + 1 : -1,
        waiting ? state.barrier().missing() : List.of(), state.membershipEpoch(), pendingPulls, eventsReplayed,
        bulkPushes, bulkPulls, state.examplesApplied(), lastError, lastErrorAtMillis);
  }
}
