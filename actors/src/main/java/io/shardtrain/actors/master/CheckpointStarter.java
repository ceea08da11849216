package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol.CheckpointWritten;
import io.shardtrain.actors.job.JobProtocol.Command;
import io.shardtrain.actors.job.JobProtocol.Internal;
import io.shardtrain.actors.job.JobProtocol.TakeCheckpoint;
import io.shardtrain.actors.transport.Asks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Starts the master's checkpoints for its {@link CheckpointQueue}: the {@link CheckpointTaker} asks
 * the master for its offsets at the checkpoint's step ({@link OffsetsAt}), and its outcome comes
 * back to the master ({@link CheckpointFinished}), which commits it.
 */
final class CheckpointStarter implements CheckpointQueue.Starter {
  /** The master's state at a checkpoint's step, once every trainer reported that step (or at the deadline). */
  record OffsetsAt(long step, String dir, long deadlineNanos,
      ActorRef<StatusReply<MasterState.CommittedCheckpoint>> replyTo) implements Internal {}

  /** A checkpoint taken (or failed) while {@code rollbacksAtStart} rollbacks had started. */
  record CheckpointFinished(MasterState.CommittedCheckpoint result, Throwable failure, long rollbacksAtStart,
      List<ActorRef<StatusReply<CheckpointWritten>>> replyTo) implements Internal {}

  private final ActorContext<Command> context;
  private final CheckpointTaker taker;
  private final CheckpointSettings settings;
  private final LongSupplier rollbacksStarted;

  CheckpointStarter(ActorContext<Command> context, CheckpointTaker taker, CheckpointSettings settings,
      LongSupplier rollbacksStarted) {
    this.context = context;
    this.taker = taker;
    this.settings = settings;
    this.rollbacksStarted = rollbacksStarted;
  }

  @Override
  public void start(MasterState s, TakeCheckpoint request) {
    boolean periodic = request == null;
    Path dir = periodic || request.dir() == null || request.dir().isBlank() ? null : Path.of(request.dir());
    long keepFrom = s.checkpoint() == null ? 0 : s.checkpoint().step();
    ActorRef<Command> self = context.getSelf();
    Duration timeout = settings.timeout();
    var stage = taker.take(s.job(), periodic && settings.everySteps() > 0, s.done(), s.cancelled(), keepFrom, dir,
        step -> AskPattern.<Command, StatusReply<MasterState.CommittedCheckpoint>>ask(self,
                r -> new OffsetsAt(step, "", System.nanoTime() + timeout.toNanos() / 2, r),
                timeout, context.getSystem().scheduler())
            .thenApply(StatusReply::getValue));
    long rollbacksAtStart = rollbacksStarted.getAsLong();
    List<ActorRef<StatusReply<CheckpointWritten>>> replyTo = periodic ? List.of() : List.of(request.replyTo());
    // The failure itself, not the futures' wrapper, whose message starts with the failure's class name.
    context.pipeToSelf(stage, (result, failure) -> new CheckpointFinished(result,
        failure == null ? null : Asks.cause(failure), rollbacksAtStart, replyTo));
  }

  /**
   * Answers {@code c} with the master's offsets at its step once every trainer reported that step,
   * the job is done, or the deadline passed; until then asks again shortly (progress reports trail
   * the blocks by a moment).
   */
  static void answer(MasterState s, OffsetsAt c, TimerScheduler<Command> timers, Logger log) {
    if (s.done() || s.allReportedUpTo(c.step()) || System.nanoTime() > c.deadlineNanos()) {
      if (!s.done() && !s.allReportedUpTo(c.step())) {
        log.warn("checkpoint at step {}: not every trainer reported that step; offsets as reported", c.step());
      }
      c.replyTo().tell(StatusReply.success(s.checkpointAt(c.step(), c.dir())));
    } else {
      timers.startSingleTimer("offsets-" + c.step(), c, Duration.ofMillis(100));
    }
  }
}
