package io.shardtrain.actors.grpc;

import akka.actor.ActorSelection;
import akka.actor.Address;
import akka.actor.typed.ActorSystem;
import akka.cluster.Member;
import akka.cluster.sharding.ShardRegion;
import akka.cluster.typed.Cluster;
import akka.pattern.Patterns;
import io.shardtrain.actors.metrics.TrafficReporter;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.grpc.NodeTraffic;
import io.shardtrain.grpc.Placement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What the serving node knows of the cluster: its members, which blocks each ps node's shard region
 * holds, and each member's traffic.
 */
final class ClusterView {
  private ClusterView() {}

  static List<io.shardtrain.grpc.Member> members(ActorSystem<?> system) {
    List<io.shardtrain.grpc.Member> members = new ArrayList<>();
    for (Member m : Cluster.get(system).state().getMembers()) {
      members.add(io.shardtrain.grpc.Member.newBuilder().setAddress(m.address().toString())
          .setStatus(m.status().toString()).addAllRoles(new TreeSet<>(m.getRoles())).build());
    }
    return members;
  }

  /** Each ps node's blocks; a node that does not answer within {@code timeout} is marked so. */
  static CompletionStage<List<Placement>> placement(ActorSystem<?> system, Duration timeout) {
    List<CompletableFuture<Placement>> asks = new ArrayList<>();
    for (Member m : Cluster.get(system).state().getMembers()) {
      if (m.hasRole("ps")) asks.add(blocksOf(system, m.address(), timeout).toCompletableFuture());
    }
    return all(asks);
  }

  /**
   * Each member's traffic (members with role client run neither trainers nor blocks); one that does
   * not answer within {@code timeout} is marked so.
   */
  static CompletionStage<List<NodeTraffic>> traffic(ActorSystem<?> system, Duration timeout) {
    List<CompletableFuture<NodeTraffic>> asks = new ArrayList<>();
    for (Member m : Cluster.get(system).state().getMembers()) {
      if (!m.hasRole("client")) asks.add(trafficOf(system, m.address(), timeout).toCompletableFuture());
    }
    return all(asks);
  }

  /** The answers of {@code asks}, in their order, once all are in. */
  static <T> CompletionStage<List<T>> all(List<CompletableFuture<T>> asks) {
    return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
        .thenApply(x -> asks.stream().map(CompletableFuture::join).toList());
  }

  private static CompletionStage<NodeTraffic> trafficOf(ActorSystem<?> system, Address node, Duration timeout) {
    ActorSelection reporter = system.classicSystem().actorSelection(node + "/system/" + TrafficReporter.NAME);
    return Patterns.ask(reporter, new io.shardtrain.actors.metrics.NodeTraffic.Read(), timeout).handle((reply, failure) -> {
      NodeTraffic.Builder t = NodeTraffic.newBuilder().setNode(node.toString());
      if (failure != null || !(reply instanceof io.shardtrain.actors.metrics.NodeTraffic.Counts c)) {
        return t.setAnswered(false).build();
      }
      return t.setAnswered(true).setExamples(c.examples()).setBytes(c.bytes()).setUptimeNanos(c.uptimeNanos()).build();
    });
  }

  private static CompletionStage<Placement> blocksOf(ActorSystem<?> system, Address node, Duration timeout) {
    ActorSelection region = system.classicSystem()
        .actorSelection(node + "/system/sharding/" + ParameterBlock.ENTITY_KEY.name());
    return Patterns.ask(region, ShardRegion.getShardRegionStateInstance(), timeout).handle((reply, failure) -> {
      Placement.Builder p = Placement.newBuilder().setNode(node.toString());
      if (failure != null || !(reply instanceof ShardRegion.CurrentShardRegionState state)) {
        return p.setAnswered(false).build();
      }
      TreeSet<String> blocks = new TreeSet<>();
      for (ShardRegion.ShardState s : state.getShards()) blocks.addAll(s.getEntityIds());
      return p.setAnswered(true).addAllBlockIds(blocks).build();
    });
  }
}
