package io.shardtrain.actors.metrics;

import akka.actor.typed.ActorSystem;
import akka.cluster.ClusterEvent.CurrentClusterState;
import akka.cluster.Member;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.Supplier;

/**
 * The cluster as this node sees it: members by status and the members it cannot reach. Read from
 * Akka Cluster's current state when scraped, which is a snapshot, so no actor is asked.
 */
final class ClusterMeters {
  static final String MEMBERS = "shardtrain.cluster.members";
  static final String UNREACHABLE = "shardtrain.cluster.unreachable";

  private static final List<MemberStatus> STATUSES = List.of(MemberStatus.joining(), MemberStatus.weaklyUp(),
      MemberStatus.up(), MemberStatus.leaving(), MemberStatus.exiting(), MemberStatus.down());

  private ClusterMeters() {}

  static void bindTo(MeterRegistry registry, ActorSystem<?> system) {
    Cluster cluster = Cluster.get(system);
    bindTo(registry, cluster::state);
  }

  static void bindTo(MeterRegistry registry, Supplier<CurrentClusterState> state) {
    for (MemberStatus status : STATUSES) {
      Gauge.builder(MEMBERS, state, s -> count(s.get(), status)).tag("status", name(status))
          .description("cluster members this node sees, by status").strongReference(true).register(registry);
    }
    Gauge.builder(UNREACHABLE, state, s -> s.get().getUnreachable().size())
        .description("members this node's failure detector cannot reach").strongReference(true).register(registry);
  }

  private static double count(CurrentClusterState state, MemberStatus status) {
    int n = 0;
    for (Member m : state.getMembers()) {
      if (m.status() == status) n++;
    }
    return n;
  }

  /** Akka's own name, in snake case: {@code WeaklyUp} is {@code weakly_up}. */
  static String name(MemberStatus status) {
    return status.toString().replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }
}
