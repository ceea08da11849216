package io.shardtrain.samples.cluster;

import akka.actor.ActorSystem;
import akka.cluster.Cluster;
import akka.cluster.MemberStatus;
import akka.cluster.sharding.ClusterSharding;
import akka.cluster.sharding.ShardRegion;
import akka.pattern.Patterns;
import io.shardtrain.actors.ps.ParameterBlock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Akka Management readiness check ({@code /ready}) of a ShardTrain node: this node is an Up member
 * of the cluster, and on a {@code ps} node the parameter-block shard region runs here and the
 * shard coordinator has listed it once, so blocks can be placed on and recovered into this node
 * (the journal was reached and its tables made when the node started, else it would not have
 * started). Once listed, the coordinator is not asked again: a probe during a busy rebalance
 * would otherwise time out and take a working node out of its Service.
 */
public final class NodeReadiness implements Supplier<CompletionStage<Boolean>> {
  private final ActorSystem system;
  private final Duration ask;
  private final AtomicBoolean regionListed = new AtomicBoolean();

  public NodeReadiness(ActorSystem system) {
    this.system = system;
    // Under Akka Management's own limit for a check, so a slow answer is "not ready", not an error.
    this.ask = system.settings().config().getDuration("akka.management.health-checks.check-timeout").multipliedBy(4)
        .dividedBy(5);
  }

  @Override
  public CompletionStage<Boolean> get() {
    Cluster cluster = Cluster.get(system);
    if (cluster.selfMember().status() != MemberStatus.up()) return CompletableFuture.completedFuture(false);
    if (!cluster.selfMember().hasRole("ps") || regionListed.get()) return CompletableFuture.completedFuture(true);
    akka.actor.ActorRef region = ClusterSharding.get(system).shardRegion(ParameterBlock.ENTITY_KEY.name());
    return Patterns.ask(region, ShardRegion.getCurrentRegionsInstance(), ask)
        .thenApply(r -> {
          boolean listed = ((ShardRegion.CurrentRegions) r).getRegions().contains(cluster.selfAddress());
          if (listed) regionListed.set(true);
          return listed;
        })
        .exceptionally(e -> false);
  }
}
