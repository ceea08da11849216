package io.shardtrain.actors.sharding;

import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.persistence.typed.javadsl.CommandHandler;
import java.time.Duration;

/**
 * Retires an entity that no trainer takes part in (its membership empty: the job ended, or every
 * trainer left) once nothing reached it for a while, so a finished job's entities that a save-model
 * or a pull woke leave memory again. Sharding's own idle passivation stays off, since a sync entity
 * must not leave in the middle of a step; without a member there is no step. The entity's command
 * handler tells it what it heard ({@link #hearing}), and the entity what it is ({@link #watch});
 * the check is a message of the entity's own ({@code check}), on which it calls {@link #check},
 * and it retires on its {@code retire} message ({@link Passivation}).
 */
public final class IdleWatch<T> {
  private static final String TIMER = "idle-watch";

  private final ActorContext<T> context;
  private final TimerScheduler<T> timers;
  private final Duration after;
  private final T check;
  private final T retire;
  private long lastHeard = System.nanoTime();
  private boolean watching;

  /**
   * Sends {@code retire} to the entity after {@code after} without a message (zero: never);
   * {@code check} is the entity's check message.
   */
  public IdleWatch(ActorContext<T> context, TimerScheduler<T> timers, Duration after, T check, T retire) {
    this.context = context;
    this.timers = timers;
    this.after = after;
    this.check = check;
    this.retire = retire;
  }

  /** {@code handler}, noting that every message but the check reached the entity. */
  public <E, S> CommandHandler<T, E, S> hearing(CommandHandler<T, E, S> handler) {
    return (state, cmd) -> {
      if (cmd != check) lastHeard = System.nanoTime();
      return handler.apply(state, cmd);
    };
  }

  /** After a change: checks every half of the wait while {@code unused} (no member trainers), else stops checking. */
  public void watch(boolean unused) {
    // Called after every change (every push): only a change of state touches the timer.
    if (after.isZero() || unused == watching) return;
    watching = unused;
    if (unused) timers.startTimerWithFixedDelay(TIMER, check, after.dividedBy(2));
    else timers.cancel(TIMER);
  }

  /** On the check message: retires the entity when nothing reached it for the wait. */
  public void check() {
    if (System.nanoTime() - lastHeard < after.toNanos()) return;
    context.getLog().info("{} leaves memory: no trainer takes part in it and nothing reached it for {}",
        context.getSelf().path().name(), after);
    context.getSelf().tell(retire);
  }
}
