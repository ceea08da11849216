package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.BehaviorInterceptor;
import akka.actor.typed.TypedActorContext;
import io.shardtrain.actors.job.JobProtocol;

/**
 * Around a trainer: a message whose handling throws stops the trainer (Akka's default), but not
 * silently: the listener hears why (a local run waiting for its trainers does not wait forever)
 * and the master that it left (its task is re-leased without waiting for the failure timeout).
 */
final class ReportFailure extends BehaviorInterceptor<Trainer.Command, Trainer.Command> {
  private final String trainerId;
  private final ActorRef<JobProtocol.Command> master;
  private final StepListener listener;

  static ReportFailure of(Trainer.Setup setup) {
    return new ReportFailure(setup.trainerId(), setup.master(), setup.listener());
  }

  ReportFailure(String trainerId, ActorRef<JobProtocol.Command> master, StepListener listener) {
    super(Trainer.Command.class);
    this.trainerId = trainerId;
    this.master = master;
    this.listener = listener;
  }

  @Override
  public Behavior<Trainer.Command> aroundReceive(TypedActorContext<Trainer.Command> ctx, Trainer.Command msg,
      ReceiveTarget<Trainer.Command> target) {
    try {
      return target.apply(ctx, msg);
    } catch (RuntimeException e) {
      String why = "failed on " + msg.getClass().getSimpleName() + ": " + e;
      ctx.asJava().getLog().error("trainer {} {}", trainerId, why, e);
      master.tell(new JobProtocol.LeaveJob(trainerId, ctx.asJava().getSystem().ignoreRef()));
      listener.onFailed(trainerId, why);
      throw e;
    }
  }
}
