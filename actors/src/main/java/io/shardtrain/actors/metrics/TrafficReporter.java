package io.shardtrain.actors.metrics;

import akka.actor.AbstractActor;
import akka.actor.ExtendedActorSystem;
import akka.actor.Props;
import akka.actor.typed.ActorSystem;

/**
 * Answers {@link NodeTraffic.Read} with this node's {@link NodeTraffic.Counts}, at
 * {@code /system/}{@value #NAME} of every node that started ShardTrain, so a view reads each member
 * by its address without a message on the training path.
 */
public final class TrafficReporter extends AbstractActor {
  public static final String NAME = "shardtrain-traffic";

  private final NodeTraffic traffic;

  private TrafficReporter(NodeTraffic traffic) {
    this.traffic = traffic;
  }

  /** Starts the reporter of {@code system}'s node; once per node ({@link NodeMetrics} calls it). */
  static void start(ActorSystem<?> system, NodeTraffic traffic) {
    ((ExtendedActorSystem) system.classicSystem()).systemActorOf(
        Props.create(TrafficReporter.class, () -> new TrafficReporter(traffic)), NAME);
  }

  @Override
  public Receive createReceive() {
    return receiveBuilder().match(NodeTraffic.Read.class, r -> getSender().tell(traffic.counts(), getSelf())).build();
  }
}
