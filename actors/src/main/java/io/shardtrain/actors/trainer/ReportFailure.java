package io.shardtrain.actors.trainer;

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
  private final Trainer.Setup setup;

  ReportFailure(Trainer.Setup setup) {
    super(Trainer.Command.class);
    this.setup = setup;
  }

  @Override
  public Behavior<Trainer.Command> aroundReceive(TypedActorContext<Trainer.Command> ctx, Trainer.Command msg,
      ReceiveTarget<Trainer.Command> target) {
    try {
      return target.apply(ctx, msg);
    } catch (RuntimeException e) {
      String why = "failed on " + msg.getClass().getSimpleName() + ": " + e;
      ctx.asJava().getLog().error("trainer {} {}", setup.trainerId(), why, e);
      setup.master().tell(new JobProtocol.LeaveJob(setup.trainerId(), ctx.asJava().getSystem().ignoreRef()));
      setup.listener().onFailed(setup.trainerId(), why);
      throw e;
    }
  }
}
