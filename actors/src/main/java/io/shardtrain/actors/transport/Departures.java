package io.shardtrain.actors.transport;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.ClusterEvent;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Subscribe;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The nodes Akka Cluster removed, and the requests to fail with {@link PeerGone} when it removes
 * theirs: a request to a node that died gets no answer, and would otherwise wait out its timeout.
 * One per ActorSystem ({@link #get}); without the cluster (another actor provider) it knows of no
 * removal.
 *
 * <p>A removal counts {@link #SETTLE} after this node hears of it, and being unreachable or
 * downed does not count: until Cluster Sharding's region here has dropped the dead node's region,
 * which it hears of through death watch a moment after the cluster event, it still forwards a
 * block's messages there, so a request sent again through sharding any earlier is lost too. The
 * pause costs no time where Akka's split-brain resolver downs nodes: the dead node's shards are
 * placed elsewhere only {@code akka.cluster.down-removal-margin} (1 s in cluster.conf) after the
 * removal.
 */
public final class Departures implements Extension {

  /** How long after a removal this node takes it for done. */
  static final Duration SETTLE = Duration.ofSeconds(1);

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

  /** A removal's pause is over. */
  private record Settled(Address node) {}

  private final boolean clustered;
  /** Removed nodes no new member has joined at since. */
  private final Set<Address> removed = ConcurrentHashMap.newKeySet();
  /** What to fail when a node is removed; a node's set goes with its removal. */
  private final Map<Address, Set<CompletableFuture<?>>> waiting = new ConcurrentHashMap<>();
  /** What to fail when any node is removed: requests whose recipient's node is not known here. */
  private final Set<CompletableFuture<?>> waitingOnAny = ConcurrentHashMap.newKeySet();

  private Departures(ActorSystem<?> system) {
    if (!"akka.cluster.ClusterActorRefProvider".equals(system.settings().classicSettings().ProviderClass())) {
      clustered = false;
      return;
    }
    clustered = true;
    Cluster cluster = Cluster.get(system);
    ActorRef<Object> listener = system.systemActorOf(listener(), "shardtrain-departures", Props.empty());
    cluster.subscriptions().tell(Subscribe.create(listener.narrow(), ClusterEvent.MemberEvent.class));
  }

  private Behavior<Object> listener() {
    return Behaviors.withTimers(timers -> Behaviors.receive(Object.class)
        .onMessage(ClusterEvent.MemberRemoved.class, e -> {
          Address node = e.member().address();
          timers.startSingleTimer(node, new Settled(node), SETTLE);
          return Behaviors.same();
        })
        .onMessage(ClusterEvent.MemberEvent.class, e -> {
          if (e instanceof ClusterEvent.MemberJoined || e instanceof ClusterEvent.MemberWeaklyUp
              || e instanceof ClusterEvent.MemberUp) {
            // A new member at a removed node's address.
            timers.cancel(e.member().address());
            removed.remove(e.member().address());
          }
          return Behaviors.same();
        })
        .onMessage(Settled.class, s -> {
          gone(s.node());
          return Behaviors.same();
        })
        .build());
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

  /**
   * Fails {@code pending} with {@link PeerGone} if the cluster removes any node before it completes:
   * for a request through sharding to an entity whose node is not known here (a sparse table's
   * shard). When the removed node was not the entity's, the request goes again for nothing, which
   * its key makes harmless; when it was, it does not wait out its timeout.
   */
  public void failIfAnyRemoved(CompletableFuture<?> pending) {
    if (!clustered || pending.isDone()) return;
    waitingOnAny.add(pending);
    pending.whenComplete((r, e) -> waitingOnAny.remove(pending));
  }

  /** Whether the cluster removed {@code node}, and no new member joined at its address since. */
  public boolean removed(Address node) {
    return removed.contains(node);
  }

  private void gone(Address node) {
    // Recorded before the waiting set is taken, so a caller that registers and then checks
    // removed() cannot miss this removal.
    removed.add(node);
    Set<CompletableFuture<?>> gone = waiting.remove(node);
    if (gone != null) {
      for (CompletableFuture<?> f : gone) f.completeExceptionally(new PeerGone("node " + node + " left the cluster"));
    }
    for (CompletableFuture<?> f : waitingOnAny) {
      f.completeExceptionally(new PeerGone("node " + node + " left the cluster; the request goes again"));
    }
  }
}
