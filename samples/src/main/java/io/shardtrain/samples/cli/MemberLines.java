package io.shardtrain.samples.cli;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.ClusterEvent;
import akka.cluster.Member;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Subscribe;
import java.io.PrintWriter;
import java.util.Set;
import java.util.TreeSet;

/**
 * A line on a node's output when another member becomes unreachable, reachable again, or leaves
 * the cluster. At the default log level (WARN) Akka logs none of these, so an operator watching a
 * node saw its job pause while a ps node's blocks moved, with no word of why.
 */
final class MemberLines {
  private MemberLines() {}

  /** Prints {@code system}'s view of the other members' changes on {@code out} from now on. */
  static void start(ActorSystem<?> system, PrintWriter out) {
    akka.actor.Address self = Cluster.get(system).selfMember().address();
    ActorRef<ClusterEvent.ClusterDomainEvent> lines = system.systemActorOf(
        Behaviors.receive(ClusterEvent.ClusterDomainEvent.class).onAnyMessage(e -> {
          String line = line(e, self);
          if (line != null) {
            out.println(line);
            out.flush();
          }
          return Behaviors.same();
        }).build(), "member-lines", Props.empty());
    for (Class<? extends ClusterEvent.ClusterDomainEvent> c : Set.of(ClusterEvent.UnreachableMember.class,
        ClusterEvent.ReachableMember.class, ClusterEvent.MemberRemoved.class)) {
      Cluster.get(system).subscriptions().tell(Subscribe.create(lines.narrow(), c));
    }
  }

  /** The line for {@code e}; null for the node's own changes and for events that get none. */
  static String line(ClusterEvent.ClusterDomainEvent e, akka.actor.Address self) {
    if (e instanceof ClusterEvent.UnreachableMember u && !u.member().address().equals(self)) {
      return named(u.member()) + " is unreachable (no heartbeat answered)";
    }
    if (e instanceof ClusterEvent.ReachableMember r && !r.member().address().equals(self)) {
      return named(r.member()) + " is reachable again";
    }
    if (e instanceof ClusterEvent.MemberRemoved m && !m.member().address().equals(self)) {
      return named(m.member()) + (m.previousStatus() == MemberStatus.down() ? " was downed and removed from the cluster"
          : " left the cluster");
    }
    return null;
  }

  private static String named(Member m) {
    Set<String> roles = new TreeSet<>(m.getRoles());
    roles.removeIf(r -> r.startsWith("dc-"));
    return "member " + m.address() + " (roles " + String.join(",", roles) + ")";
  }
}
