package io.shardtrain.actors.ps;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Requests waiting for the block to reach a version, by version and in arrival order within one.
 * Held in memory by the block's actor.
 */
final class ByVersion<T> {
  private final TreeMap<Long, List<T>> byVersion = new TreeMap<>();

  void add(long version, T request) {
    byVersion.computeIfAbsent(version, k -> new ArrayList<>()).add(request);
  }

  boolean isEmpty() {
    return byVersion.isEmpty();
  }

  /** How many waiting requests {@code which} holds for. */
  int count(Predicate<T> which) {
    int n = 0;
    for (List<T> waiting : byVersion.values()) {
      for (T t : waiting) if (which.test(t)) n++;
    }
    return n;
  }

  /** The requests waiting for exactly {@code version}; empty when none. */
  List<T> at(long version) {
    return byVersion.getOrDefault(version, List.of());
  }

  /** Removes and returns the requests for versions up to {@code version}, oldest first. */
  NavigableMap<Long, List<T>> takeUpTo(long version) {
    if (byVersion.isEmpty() || byVersion.firstKey() > version) return new TreeMap<>();
    NavigableMap<Long, List<T>> head = byVersion.headMap(version, true);
    NavigableMap<Long, List<T>> taken = new TreeMap<>(head);
    head.clear();
    return taken;
  }

  /** Removes and returns every waiting request, oldest version first. */
  List<T> takeAll() {
    List<T> all = new ArrayList<>();
    for (List<T> waiting : byVersion.values()) all.addAll(waiting);
    byVersion.clear();
    return all;
  }
}
