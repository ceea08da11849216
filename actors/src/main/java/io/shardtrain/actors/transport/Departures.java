package io.shardtrain.actors.transport;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.ClusterEvent;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Subscribe;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes Akka Cluster removed, and the requests to fail with {@link PeerGone} when it removes
 * theirs: a request to a node that died gets no answer, and would otherwise wait out its timeout.
 * Removed, not unreachable or downed: until the removal Cluster Sharding still routes a block's
 * messages to the dead node's shard region, so a request sent again through sharding any earlier
 * would be lost as well. One per ActorSystem ({@link #get}); without the cluster (another actor
 * provider) it knows of no removal.
 */
public final class Departures implements Extension {

  /** The extension id; use {@link Departures#get}. */
  public static final class Id extends ExtensionId<Departures> {
    static final Id INSTANCE = new Id();

    private Id() {}

    @Override
    public Departures createExtension(ActorSystem<?> system) {
      return new Departures(system);
    }
  }

  /** The one Departures of this ActorSystem, listening from first use. */
  public static Departures get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  private final boolean clustered;
  /** Removed nodes no new member has joined at since. */
  private final Set<Address> removed = ConcurrentHashMap.newKeySet();
  /** What to fail when a node is removed; a node's set goes with its removal. */
  private final Map<Address, Set<CompletableFuture<?>>> waiting = new ConcurrentHashMap<>();

  private Departures(ActorSystem<?> system) {
    if (!"akka.cluster.ClusterActorRefProvider".equals(system.settings().classicSettings().ProviderClass())) {
      clustered = false;
      return;
    }
    clustered = true;
    Cluster cluster = Cluster.get(system);
    ActorRef<ClusterEvent.MemberEvent> listener = system.systemActorOf(
        Behaviors.receive(ClusterEvent.MemberEvent.class).onAnyMessage(e -> {
          event(e);
          return Behaviors.same();
        }).build(),
        "shardtrain-departures", Props.empty());
    cluster.subscriptions().tell(Subscribe.create(listener, ClusterEvent.MemberEvent.class));
  }

  /**
   * Fails {@code pending} with {@link PeerGone} if the cluster removes {@code node} before it
   * completes. A removal before this call does not count: a request sent after it goes wherever
   * the cluster routes now.
   */
  public void failIfRemoved(Address node, CompletableFuture<?> pending) {
    if (!clustered || node == null || pending.isDone()) return;
    Set<CompletableFuture<?>> set = waiting.compute(node, (a, s) -> {
      Set<CompletableFuture<?>> t = s != null ? s : ConcurrentHashMap.newKeySet();
      t.add(pending);
      return t;
    });
    pending.whenComplete((r, e) -> set.remove(pending));
  }

  /** Whether the cluster removed {@code node}, and no new member joined at its address since. */
  public boolean removed(Address node) {
    return removed.contains(node);
  }

  private void event(ClusterEvent.MemberEvent e) {
    Address node = e.member().address();
    if (e instanceof ClusterEvent.MemberRemoved) {
      // Recorded before the waiting set is taken, so a caller that registers and then checks
      // removed() cannot miss this removal.
      removed.add(node);
      Set<CompletableFuture<?>> gone = waiting.remove(node);
      if (gone == null) return;
      for (CompletableFuture<?> f : gone) f.completeExceptionally(new PeerGone("node " + node + " left the cluster"));
    } else if (e instanceof ClusterEvent.MemberJoined || e instanceof ClusterEvent.MemberWeaklyUp
        || e instanceof ClusterEvent.MemberUp) {
      removed.remove(node);
    }
  }
}
