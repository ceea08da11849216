package io.shardtrain.actors.trainer;

import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import io.shardtrain.actors.allreduce.Replica;
import io.shardtrain.actors.allreduce.StepReduction;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A trainer's steps in all-reduce mode: the phases that replace the parameter server's push and
 * pull. Each step computes the batch's gradients, and as backward hands out each parameter's
 * gradient (last layer first) its bucket enters the ring ({@link StepReduction}), so
 * communication overlaps the rest of backward; once every bucket holds the ring's mean the
 * trainer applies the step to its {@link Replica}. Every member takes every step: one without
 * data contributes nothing; one that must stop (no data left in the job, or told to stop) says
 * so, and every member leaves after that step. Replicas publish their values to the parameter
 * blocks every {@code publish-every} steps and before they leave, each member its share of the
 * blocks, so evaluation and save-model read the job's model where they always do. The master
 * leases tasks and records reader offsets as in sync mode.
 */
final class RingStepping {

  /** The master's member list, to form the ring from. */
  record Members(List<String> members, Throwable failure) implements Trainer.Internal {}

  /** A block kept (or refused) the values published after {@code step}. */
  record Published(String block, long step, Throwable failure) implements Trainer.Internal {}

  private final Trainer trainer;
  private final ActorContext<Trainer.Command> context;
  private final Trainer.Setup setup;
  private final RingLink link;
  private final BlockExchange blocks;
  private final TrainerCounts counts;
  private final TrainerProfile profile;
  private final ProgressReports reports;
  private Replica replica;
  private List<String> members;
  /** The last step this replica applied. */
  private long lastStep;
  private int publishesOut;
  private long publishedStep = -1;
  private boolean left;

  RingStepping(Trainer trainer, ActorContext<Trainer.Command> context, Trainer.Setup setup, BlockExchange blocks,
      TrainerCounts counts, TrainerProfile profile, ProgressReports reports) {
    this.trainer = trainer;
    this.blocks = blocks;
    this.counts = counts;
    this.profile = profile;
    this.reports = reports;
    this.context = context;
    this.setup = setup;
    this.link = new RingLink(context, setup.trainerId());
  }

  /** Chunks of a step not begun yet wait; those of steps done are dropped. */
  Behavior<Trainer.Command> early(RingLink.ChunkArrived m) {
    link.early(m, lastStep);
    return Behaviors.same();
  }

  Behavior<Trainer.Command> hello(RingLink.Hello m) {
    link.hello(m);
    return Behaviors.same();
  }

  Behavior<Trainer.Command> listed(RingLink.Listed m) {
    link.listed(m);
    return Behaviors.same();
  }

  /**
   * The step after {@code previousStep}: on {@code task}'s next batch when {@code withData}, else
   * with nothing; {@code leaving}: every member leaves after it.
   */
  Behavior<Trainer.Command> step(Session s, Trainer.Task task, long previousStep, boolean withData, boolean leaving) {
    if (!link.formed()) return forming(s, task, previousStep, withData, leaving);
    if (replica == null) {
      JobSpec job = s.job();
      replica = new Replica(s.model().parameters(),
          OptimizerSpec.parse(job.optimizer()).withWeightDecay(job.weightDecay()).create(),
          LearningRateSchedule.parse(job.lrSchedule(), job.lr()), job.examplesPerUpdate());
      lastStep = previousStep;
    }
    long step = previousStep + 1;
    long t0 = System.nanoTime();
    long cpu0 = BlockExchange.cpuTime();
    List<Parameter> params = s.model().parameters();
    Batch batch = withData ? BlockExchange.nextBatch(s, task.lease(), task.reader()) : null;
    int examples = batch == null ? 0 : batch.size();
    List<String> order = s.model().blocks();
    StepReduction reduction = new StepReduction(link.size(), link.position(), step, order.size(), examples,
        leaving, link::send);
    // A bucket per block: messages stay within the channel's frame whatever a parameter's size.
    Consumer<Parameter> buckets = p -> {
      for (BlockSlice slice : s.model().slicesOf(p)) {
        reduction.start(order.indexOf(slice.entityId()), p.grad().data(), slice.offset(), slice.length());
      }
    };
    float loss = Float.NaN;
    if (batch != null) {
      s.model().beginForward(batch);
      loss = s.model().finishForwardBackward(batch, buckets);
    } else {
      for (Parameter p : params) buckets.accept(p);
    }
    long computed = System.nanoTime();
    long cpu = BlockExchange.cpuTime() - cpu0;
    link.drain(step, reduction::received);
    RingStep st = new RingStep(reduction, examples, batch == null ? 0 : batch.positionAfter().offset(), loss, t0,
        computed, cpu);
    return reducing(s, task, st);
  }

  /** A step on its way round the ring. */
  private static final class RingStep {
    final StepReduction reduction;
    final int examples;
    final long offsetAfter;
    final float loss;
    final long computeStarted;
    final long computed;
    final long computeCpu;
    boolean stopRequested;

    RingStep(StepReduction reduction, int examples, long offsetAfter, float loss, long computeStarted, long computed,
        long computeCpu) {
      this.reduction = reduction;
      this.examples = examples;
      this.offsetAfter = offsetAfter;
      this.loss = loss;
      this.computeStarted = computeStarted;
      this.computed = computed;
      this.computeCpu = computeCpu;
    }
  }

  private Behavior<Trainer.Command> reducing(Session s, Trainer.Task task, RingStep st) {
    if (st.reduction.done()) return reduced(s, task, st);
    return trainer.phase(s, () -> st.stopRequested, Behaviors.receive(Trainer.Command.class)
        .onMessage(RingLink.ChunkArrived.class, m -> {
          if (m.step() != st.reduction.step()) {
            link.early(m, lastStep);
            return Behaviors.same();
          }
          st.reduction.received(m.chunk());
          return st.reduction.done() ? reduced(s, task, st) : Behaviors.same();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> {
          st.stopRequested = true;
          return Behaviors.same();
        }));
  }

  private Behavior<Trainer.Command> reduced(Session s, Trainer.Task task, RingStep st) {
    StepReduction r = st.reduction;
    long reducedAt = System.nanoTime();
    replica.apply(r.totalExamples());
    lastStep = r.step();
    counts.stepCompleted(r.step());
    long applied = System.nanoTime();
    // In the profile the ring's wait is the push wait, the optimizer step the pull wait.
    profile.completed(new StepTimes(st.computeStarted, st.computed, st.computeCpu, reducedAt, applied), applied);
    if (st.examples > 0) {
      setup.listener().onStep(setup.trainerId(), r.step(), st.loss, st.examples, st.computed - st.computeStarted);
      reports.completed(task.lease().epoch(), task.lease().task(), r.step(), st.offsetAfter);
    }
    if (r.step() % setup.settings().publishEvery() == 0) publish(s, r.step());
    trainer.sendReport(s);
    if (r.leaving()) {
      return trainer.ringStepDone(s, task, r.step(), st.stopRequested ? "stopped" : "the ring's last step");
    }
    // The other members learn in the next step that this one leaves, and leave with it.
    if (st.stopRequested) return step(s, task, r.step(), false, true);
    return trainer.ringStepDone(s, task, r.step(), null);
  }

  // ---- forming the ring ----

  private Behavior<Trainer.Command> forming(Session s, Trainer.Task task, long previousStep, boolean withData,
      boolean leaving) {
    link.join(s.job().jobId());
    askMembers();
    Supplier<Behavior<Trainer.Command>> ifFormed = () -> members != null && link.form(members)
        ? step(s, task, previousStep, withData, leaving) : Behaviors.same();
    return trainer.phase(s, () -> false, Behaviors.receive(Trainer.Command.class)
        .onMessage(Members.class, m -> {
          if (m.failure() != null) {
            context.getLog().warn("trainer {}: no member list from the master ({}), asking again",
                setup.trainerId(), m.failure().getMessage());
            askMembers();
            return Behaviors.same();
          }
          members = m.members();
          return ifFormed.get();
        })
        .onMessage(RingLink.Hello.class, m -> {
          link.hello(m);
          return ifFormed.get();
        })
        .onMessage(RingLink.Listed.class, m -> {
          link.listed(m);
          return ifFormed.get();
        })
        // Before its first ring step: nothing of the ring to hand over.
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> trainer.ringStepDone(s, task, previousStep, "stopped")));
  }

  private void askMembers() {
    context.ask(JobProtocol.JobStatus.class, setup.master(), setup.settings().askTimeout(), JobProtocol.GetStatus::new,
        (r, failure) -> new Members(r == null ? null : r.members(), failure));
  }

  // ---- publishing ----

  /** Sends this member's share of the blocks, as the replica holds them after {@code step}. */
  private void publish(Session s, long step) {
    List<String> order = s.job().blocks();
    for (Parameter p : s.model().parameters()) {
      for (BlockSlice slice : s.model().slicesOf(p)) {
        String block = slice.entityId();
        if (order.indexOf(block) % link.size() != link.position()) continue;
        float[] values = TrainerModel.valuesOf(p, slice);
        publishesOut++;
        context.pipeToSelf(blocks.publish(block, step, replica.examplesApplied(), values),
            (version, failure) -> new Published(block, step, failure));
      }
    }
    publishedStep = step;
  }

  Behavior<Trainer.Command> published(Published m) {
    publishesOut--;
    if (m.failure() != null) {
      context.getLog().warn("trainer {}: block {} did not keep the values of step {}: {}", setup.trainerId(),
          m.block(), m.step(), m.failure().getMessage());
    }
    return Behaviors.same();
  }

  /** Whether {@link #leave} handed the replica over. */
  boolean left() {
    return left;
  }

  /**
   * Before leaving: publishes the last step (unless it was just published), shows the replica to
   * the listener, and waits until every publication was answered, then {@code then}.
   */
  Behavior<Trainer.Command> leave(Session s, Supplier<Behavior<Trainer.Command>> then) {
    left = true;
    if (replica != null && lastStep > 0) {
      if (publishedStep != lastStep) publish(s, lastStep);
      setup.listener().onReplica(setup.trainerId(), lastStep, s.model().valuesByName());
    }
    if (publishesOut == 0) return then.get();
    return trainer.phase(s, () -> true, Behaviors.receive(Trainer.Command.class)
        .onMessage(Published.class, m -> {
          published(m);
          return publishesOut == 0 ? then.get() : Behaviors.<Trainer.Command>same();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, Behaviors::same));
  }
}
