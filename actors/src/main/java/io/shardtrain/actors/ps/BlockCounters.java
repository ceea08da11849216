package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import java.util.List;

/** What a block's actor counts since it (re)started, read out as {@link BlockStats}; plain counters, one owner. */
final class BlockCounters {
  long pushes;
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

  /** The counters with the barrier of {@code state} and the number of waiting pulls. */
  BlockStats stats(String entityId, BlockState state, int pendingPulls) {
    boolean waiting = state.isWaiting();
    return new BlockStats(entityId, state.isInitialised(), state.version(), state.updates(), pushes, duplicates,
        rejectedStale, rejectedNonFinite, rejectedBadLength, rejectedNotInitialised, rejectedAhead, rejectedMalformed,
        skippedNonFinite, pullTimeouts, waiting ? state.version() + 1 : -1,
        waiting ? state.barrier().missing() : List.of(), state.membershipEpoch(), pendingPulls, eventsReplayed,
        bulkPushes, bulkPulls, state.examplesApplied());
  }
}
