package io.shardtrain.actors.trainer;

import akka.Done;
import akka.actor.Cancellable;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.BehaviorInterceptor;
import akka.actor.typed.PostStop;
import akka.actor.typed.Signal;
import akka.actor.typed.TypedActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.Patterns;
import java.time.Duration;

/**
 * Around a trainer: when its node shuts down (SIGTERM, {@code ActorSystem.terminate}), the trainer
 * is asked to stop ({@link Trainer.Stop}: its step finished and reported, the job left) before the
 * node's sharding stops, in the phase before it. Stopped with the node instead, it would push to a
 * shard region already gone, warning of each push, and the master would learn that it left only
 * from its death watch. A trainer that ended by itself cancels its task.
 */
final class StopOnShutdown extends BehaviorInterceptor<Trainer.Command, Trainer.Command> {
  private static final String PHASE = CoordinatedShutdown.PhaseBeforeClusterShutdown();

  private final Cancellable task;

  private StopOnShutdown(Cancellable task) {
    super(Trainer.Command.class);
    this.task = task;
  }

  static Behavior<Trainer.Command> around(Behavior<Trainer.Command> trainer) {
    return Behaviors.setup(ctx -> {
      CoordinatedShutdown shutdown = CoordinatedShutdown.get(ctx.getSystem());
      // A little under the phase's own timeout, so the shutdown goes on with this task answered.
      Duration wait = Duration.ofMillis(shutdown.timeout(PHASE).toMillis()).minusMillis(500);
      ActorRef<Trainer.Command> self = ctx.getSelf();
      Cancellable task = shutdown.addCancellableTask(PHASE, "stop-" + self.path().name(),
          () -> Patterns.gracefulStop(Adapter.toClassic(self), wait, Trainer.Stop.INSTANCE)
              .handle((stopped, timedOut) -> Done.done()));
      return Behaviors.intercept(() -> new StopOnShutdown(task), trainer);
    });
  }

  @Override
  public Behavior<Trainer.Command> aroundReceive(TypedActorContext<Trainer.Command> ctx, Trainer.Command msg,
      ReceiveTarget<Trainer.Command> target) {
    return target.apply(ctx, msg);
  }

  @Override
  public Behavior<Trainer.Command> aroundSignal(TypedActorContext<Trainer.Command> ctx, Signal signal,
      SignalTarget<Trainer.Command> target) {
    if (signal instanceof PostStop) task.cancel();
    return target.apply(ctx, signal);
  }
}
