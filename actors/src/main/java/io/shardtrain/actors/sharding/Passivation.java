package io.shardtrain.actors.sharding;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.BehaviorInterceptor;
import akka.actor.typed.TypedActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * An entity asked to leave memory ({@code retire} messages) leaves through sharding's passivation:
 * sharding then sends the entity its stop message and keeps what arrives meanwhile for the next
 * incarnation. An entity that stopped by itself would leave those messages in a dead mailbox, and
 * their askers would wait out their timeouts.
 */
public final class Passivation<T> extends BehaviorInterceptor<T, T> {
  private final Class<? extends T> retire;
  private final ActorRef<ClusterSharding.ShardCommand> shard;

  private Passivation(Class<T> type, Class<? extends T> retire, ActorRef<ClusterSharding.ShardCommand> shard) {
    super(type);
    this.retire = retire;
    this.shard = shard;
  }

  /** {@code entity}, whose {@code retire} messages become a passivation request to its {@code shard}. */
  public static <T> Behavior<T> onRetire(Behavior<T> entity, Class<T> type, Class<? extends T> retire,
      ActorRef<ClusterSharding.ShardCommand> shard) {
    if (shard == null) throw new IllegalArgumentException("the entity's shard must not be null");
    return Behaviors.intercept(() -> new Passivation<>(type, retire, shard), entity);
  }

  @Override
  public Behavior<T> aroundReceive(TypedActorContext<T> ctx, T msg, ReceiveTarget<T> target) {
    if (!retire.isInstance(msg)) return target.apply(ctx, msg);
    shard.tell(new ClusterSharding.Passivate<>(ctx.asJava().getSelf()));
    return Behaviors.same();
  }
}
