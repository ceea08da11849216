package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockProtocol.Pull;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Pulls waiting for a version the block has not reached, each under an id its timeout names. Held
 * in memory by the block's actor, which arms and cancels the timers.
 */
final class PendingPulls {
  private final TreeMap<Long, Pull> byId = new TreeMap<>();
  private long nextId;

  /** Holds {@code pull}; returns its id. */
  long add(Pull pull) {
    long id = nextId++;
    byId.put(id, pull);
    return id;
  }

  /** Removes and returns the pull {@code id}, or null when it was answered already. */
  Pull remove(long id) {
    return byId.remove(id);
  }

  int size() {
    return byId.size();
  }

  /** Removes and returns, by id in arrival order, the pulls {@code version} satisfies. */
  Map<Long, Pull> takeReached(long version) {
    if (byId.isEmpty()) return Map.of();
    Map<Long, Pull> reached = new LinkedHashMap<>();
    Iterator<Map.Entry<Long, Pull>> it = byId.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, Pull> e = it.next();
      if (e.getValue().minVersion() <= version) {
        it.remove();
        reached.put(e.getKey(), e.getValue());
      }
    }
    return reached;
  }

  /** Removes and returns every waiting pull, by id. */
  Map<Long, Pull> takeAll() {
    Map<Long, Pull> all = new LinkedHashMap<>(byId);
    byId.clear();
    return all;
  }
}
