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
import java.util.function.Supplier;

/**
 * Akka Management readiness check ({@code /ready}) of a ShardTrain node: this node is an Up member
 * of the cluster, and on a {@code ps} node the parameter-block shard region runs here and the
 * shard coordinator lists it, so blocks can be placed on and recovered into this node (the
 * journal was reached and its tables made when the node started, else it would not have started).
 */
public final class NodeReadiness implements Supplier<CompletionStage<Boolean>> {
  private static final Duration ASK = Duration.ofSeconds(3);
  private final ActorSystem system;

  public NodeReadiness(ActorSystem system) {
    this.system = system;
  }

  @Override
  public CompletionStage<Boolean> get() {
    Cluster cluster = Cluster.get(system);
    if (cluster.selfMember().status() != MemberStatus.up()) return CompletableFuture.completedFuture(false);
    if (!cluster.selfMember().hasRole("ps")) return CompletableFuture.completedFuture(true);
    akka.actor.ActorRef region = ClusterSharding.get(system).shardRegion(ParameterBlock.ENTITY_KEY.name());
    return Patterns.ask(region, ShardRegion.getCurrentRegionsInstance(), ASK)
        .thenApply(r -> ((ShardRegion.CurrentRegions) r).getRegions().contains(cluster.selfAddress()))
        .exceptionally(e -> false);
  }
}
