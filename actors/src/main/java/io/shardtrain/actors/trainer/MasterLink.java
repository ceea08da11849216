package io.shardtrain.actors.trainer;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.transport.Asks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Everything a trainer says to the master ({@link JobProtocol}), and the master's answers turned into the
 * trainer's own messages: registering, asking for a task, reporting progress, heartbeats, asking
 * for a rollback and leaving. The only place the trainer names the master's protocol.
 */
final class MasterLink {

  /** The master registered this trainer ({@code failure} null) or did not answer. */
  record Registered(JobSpec job, long membershipEpoch, long lastStep, long generation, Throwable failure)
      implements Trainer.Internal {}

  /** The master's answer to a task request made in rollback generation {@code generation}. */
  record TaskAnswered(long generation, TaskAnswer answer) implements Trainer.Internal {}

  /**
   * The master recorded progress report {@code id}, whose newest step is {@code step} ({@code failure}
   * null), refused it, or did not answer.
   */
  record Reported(long id, long step, Throwable failure) implements Trainer.Internal {
    boolean timedOut() {
      return failure instanceof TimeoutException;
    }
  }

  /** The master recorded this trainer's leave, or did not answer it within {@link #LEAVE_WAIT}. */
  record Left() implements Trainer.Internal {}

  /**
   * How long a leaving trainer waits for the master's acknowledgement before it stops anyway: the
   * wait only orders the leave before the stop, and a master that is there answers in milliseconds.
   */
  private static final Duration LEAVE_WAIT = Duration.ofSeconds(2);

  /** What the master said to a task request. */
  sealed interface TaskAnswer {}

  /** A task to train on. */
  record Leased(TaskLease lease) implements TaskAnswer {}

  /** The master no longer knows this trainer (it was dropped while alive): register again. */
  record Forgotten() implements TaskAnswer {}

  /** The job waits for trainers, or for every block to know this one: ask again shortly. */
  record Waiting(int registered, int expected) implements TaskAnswer {}

  /** No task now; {@code jobDone}: none ever again. */
  record NoTask(boolean jobDone) implements TaskAnswer {}

  /** No answer, or an error. */
  record Unanswered(Throwable failure) implements TaskAnswer {}

  private final ActorContext<Trainer.Command> context;
  private final String trainerId;
  private final ActorRef<JobProtocol.Command> master;
  private final TrainerSettings settings;

  MasterLink(ActorContext<Trainer.Command> context, String trainerId, ActorRef<JobProtocol.Command> master,
      TrainerSettings settings) {
    this.context = context;
    this.trainerId = trainerId;
    this.master = master;
    this.settings = settings;
  }

  void register() {
    // The master answers with notices on a typed adapter, so it needs none of the trainer's own messages.
    // A cancelled job's trainer stops as on Trainer.Stop: its step finished and reported, the job left.
    ActorRef<TrainerNotice> notices = context.messageAdapter(TrainerNotice.class,
        n -> n instanceof TrainerNotice.Cancelled ? Trainer.Stop.INSTANCE : new Trainer.Notice(n));
    this.<JobProtocol.Registration>ask(replyTo -> new JobProtocol.RegisterTrainer(trainerId, notices, replyTo),
        (r, failure) -> r == null ? new Registered(null, 0, 0, 0, failure)
            : new Registered(r.job(), r.membershipEpoch(), r.lastStep(), r.generation(), null));
  }

  void requestTask(long generation) {
    this.<JobProtocol.TaskReply>ask(replyTo -> new JobProtocol.RequestTask(trainerId, replyTo),
        (reply, failure) -> new TaskAnswered(generation, answer(reply, failure)));
  }

  /** The master's task reply as the trainer acts on it. */
  static TaskAnswer answer(JobProtocol.TaskReply reply, Throwable failure) {
    if (failure != null) return new Unanswered(failure);
    if (reply instanceof JobProtocol.Lease l) {
      return new Leased(new TaskLease(l.epoch(), l.task(), l.from(), l.to(), l.offset(), l.skip()));
    }
    if (reply instanceof JobProtocol.NotRegistered) return new Forgotten();
    if (reply instanceof JobProtocol.WaitForTrainers w) return new Waiting(w.registered(), w.expected());
    if (reply instanceof JobProtocol.NoTask n) return new NoTask(n.jobDone());
    throw new IllegalArgumentException("unknown task reply " + reply);
  }

  /** Reports the steps of {@code report}: every block acknowledged each, whose batch ended at its offset. */
  void reportProgress(ProgressReports.Report report, long generation) {
    ProgressReports.Step newest = report.newest();
    List<JobProtocol.StepOffset> steps = report.steps().stream()
        .map(x -> new JobProtocol.StepOffset(x.step(), x.offset())).toList();
    this.<Done>ask(replyTo -> new JobProtocol.ReportProgress(trainerId, newest.epoch(), newest.task(), steps, generation,
        replyTo), (done, failure) -> new Reported(report.id(), newest.step(), failure));
  }

  /** Asks which share of the test set to predict for the job's AUC; the answer comes back as {@code answered} makes it. */
  void requestAucShare(BiFunction<JobProtocol.AucShareLease, Throwable, Trainer.Command> answered) {
    this.<JobProtocol.AucShareLease>ask(replyTo -> new JobProtocol.RequestAucShare(trainerId, replyTo), answered);
  }

  /**
   * Asks the master; its answer or failure comes back to the trainer as {@code answered} makes it. Not
   * {@code context.askWithStatus}: its stage would start a thread per answer on two cores (see {@link Asks}).
   */
  private <T> void ask(Function<ActorRef<StatusReply<T>>, JobProtocol.Command> message,
      BiFunction<T, Throwable, Trainer.Command> answered) {
    ask(message, settings.askTimeout(), answered);
  }

  private <T> void ask(Function<ActorRef<StatusReply<T>>, JobProtocol.Command> message, Duration timeout,
      BiFunction<T, Throwable, Trainer.Command> answered) {
    ActorRef<Trainer.Command> self = context.getSelf();
    Asks.onArrival(AskPattern.askWithStatus(master, message::apply, timeout,
            context.getSystem().scheduler()))
        .whenComplete((reply, failure) -> {
          Trainer.Command answer;
          try {
            answer = answered.apply(reply, failure);
          } catch (RuntimeException e) {
            // Off the actor, a throw would be lost and the trainer would wait forever: it gets the failure.
            answer = answered.apply(null, e);
          }
          self.tell(answer);
        });
  }

  /** Share {@code share} of the test AUC, predicted on the values after {@code step}. */
  void reportAuc(int share, long step, io.shardtrain.compute.metrics.AucHistogram histogram) {
    master.tell(new JobProtocol.ReportAuc(trainerId, share, step, histogram.positives(), histogram.negatives()));
  }

  void heartbeat() {
    master.tell(new JobProtocol.Heartbeat(trainerId));
  }

  /** A block is behind this trainer's step: the job has to go back to its checkpoint. */
  void rollBackToCheckpoint(String reason, long generation) {
    master.tell(new JobProtocol.RollBackToCheckpoint(reason, generation, trainerId));
  }

  /**
   * Leaves the job now; the behavior returned stops once the master recorded it: a trainer that
   * stopped at once could be seen stopping by the master's death watch before its leave arrived
   * through the singleton's proxy, and be taken for one that was lost.
   */
  Behavior<Trainer.Command> leaveAndStop() {
    this.<Done>ask(replyTo -> new JobProtocol.LeaveJob(trainerId, replyTo), LEAVE_WAIT, (done, failure) -> new Left());
    return Behaviors.receive(Trainer.Command.class)
        .onMessage(Left.class, m -> Behaviors.stopped())
        .onAnyMessage(m -> Behaviors.same())
        .build();
  }
}
