package io.shardtrain.actors.trainer;

import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.BehaviorBuilder;
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
import io.shardtrain.actors.job.TrainerNotice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
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
 *
 * <p>Faults and elasticity: the ring is formed from one membership epoch of the master's, which
 * tells members of each change (a member whose step stalls asks it); on a new epoch the members
 * drop the step in flight and bring each other level ({@link #resyncing}), so no step is applied
 * by one replica and not another, and the master learns from the chunks' task marks how far a
 * departed member's task was applied. A member reports a step's reader offset once it applied the
 * next (when every member has applied it): a task's last batch is followed by a step without data.
 * docs/ARCHITECTURE.md, "All-reduce mode", has the whole protocol.
 */
final class RingStepping {

  /**
   * The master's member list in membership epoch {@code epoch}, to form the ring from, and its last
   * checkpoint's step (-1: none) and directory.
   */
  record Members(long epoch, List<String> members, long checkpointStep, String checkpointDir, Throwable failure)
      implements Trainer.Internal {}

  /** Whether step {@code step} of ring epoch {@code epoch} is still waiting: then the master is asked. */
  record StallCheck(long epoch, long step) implements Trainer.Internal {}

  /** A leaving member waited {@code failure-timeout} for the others to apply its last step. */
  record DeparturesWaited() implements Trainer.Internal {}

  private final Trainer trainer;
  private final ActorContext<Trainer.Command> context;
  private final Trainer.Setup setup;
  private final RingLink link;
  private final TrainerCounts counts;
  private final TrainerProfile profile;
  private final ProgressReports reports;
  private Replica replica;
  /** The newest membership the master told of, and its epoch. */
  private List<String> members;
  private long membersEpoch = -1;
  /** The last step this replica applied, and whether the ring leaves after it. */
  private long lastStep;
  private boolean lastLeaving;
  private final RingHandover handover = new RingHandover();
  /** What this member told the others of the current ring. */
  private RingLink.Sync ownSync;
  /** The members' {@link RingLink.Sync}s, by epoch. */
  private final Map<Long, Map<String, RingLink.Sync>> syncs = new HashMap<>();
  /** This member's newest applied step with data, reported once the step after it is applied: {epoch, task, step, offset}. */
  private long[] heldReport;
  /** One {@link StallCheck} at a time, not one per step. */
  private boolean stallCheckPending;
  private final ReplicaPublishing publishing;
  private final RingCheckpointing checkpoints;
  private final RingDepartures departures;
  private boolean left;

  RingStepping(Trainer trainer, ActorContext<Trainer.Command> context, Trainer.Setup setup, BlockExchange blocks,
      TrainerCounts counts, TrainerProfile profile, ProgressReports reports) {
    this.trainer = trainer;
    this.counts = counts;
    this.profile = profile;
    this.reports = reports;
    this.context = context;
    this.setup = setup;
    this.link = new RingLink(context, setup.trainerId());
    this.publishing = new ReplicaPublishing(context, setup.trainerId(), blocks);
    this.checkpoints = new RingCheckpointing(context, setup);
    this.departures = new RingDepartures(setup.trainerId(), link::tell);
  }

  /** What the ring sends between this member's steps, and in phases that are not the ring's. */
  BehaviorBuilder<Trainer.Command> between(BehaviorBuilder<Trainer.Command> phase) {
    return phase
        // Chunks of a step not begun yet wait; those of steps done are dropped.
        .onMessage(RingLink.ChunkArrived.class, m -> same(() -> link.early(m, lastStep)))
        .onMessage(RingLink.Hello.class, m -> same(() -> hello(m)))
        // A transfer may come before this member learned it is behind.
        .onMessage(RingLink.TransferPart.class, m -> same(() -> handover.part(m)))
        .onMessage(RingLink.TransferEnd.class, m -> same(() -> handover.end(m)))
        .onMessage(RingLink.Listed.class, m -> same(() -> link.listed(m)))
        .onMessage(ReplicaPublishing.Published.class, m -> same(() -> publishing.published(m)))
        .onMessage(StallCheck.class, m -> same(() -> stallCheckPending = false))
        .onMessage(RingLink.LeavesAfter.class, m -> same(() -> departures.leaves(m, lastStep)))
        .onMessage(RingLink.AppliedUpTo.class, m -> same(() -> departures.answered(m)))
        // A member's word of a newer ring waits for this member's next step.
        .onMessage(RingLink.Sync.class, m -> same(() -> keep(m)));
  }

  private static Behavior<Trainer.Command> same(Runnable handler) {
    handler.run();
    return Behaviors.same();
  }

  /** Between steps: a newer membership is taken up when the next step begins. */
  Behavior<Trainer.Command> noticed(TrainerNotice notice) {
    if (notice instanceof TrainerNotice.MembersChanged m) learn(m.epoch(), m.members());
    return Behaviors.same();
  }

  /**
   * A member's introduction: a member that restarted (a new actor under its id) is told how far this
   * one got in the current ring, which the old actor may have been told instead.
   */
  private void hello(RingLink.Hello m) {
    if (link.hello(m) && ownSync != null && ownSync.epoch() == link.epoch()) link.tell(m.trainerId(), ownSync);
  }

  private boolean learn(long epoch, List<String> memberIds) {
    if (epoch <= membersEpoch) return false;
    membersEpoch = epoch;
    members = memberIds;
    return true;
  }

  private void keep(RingLink.Sync m) {
    if (m.epoch() < link.epoch()) return;
    syncs.computeIfAbsent(m.epoch(), e -> new HashMap<>()).put(m.trainerId(), m);
    // Told of an epoch the master's notice has not brought (yet): ask.
    if (m.epoch() > membersEpoch) askMembers();
  }

  private boolean newRing() {
    return !link.formed() || membersEpoch > link.epoch();
  }

  /**
   * The step after {@code previousStep}: on {@code task}'s next batch when {@code withData}, else
   * with nothing; {@code leaving}: every member leaves after it.
   */
  Behavior<Trainer.Command> step(Session s, Trainer.Task task, long previousStep, boolean withData, boolean leaving) {
    if (newRing()) return resyncing(s, task, previousStep, null, withData, leaving);
    Batch batch = withData ? BlockExchange.nextBatch(s, task.lease(), task.reader()) : null;
    return compute(s, task, new RingStep(lastStep + 1, batch, leaving));
  }

  /** Computes {@code st}'s gradients, each bucket entering the ring as backward produces it. */
  private Behavior<Trainer.Command> compute(Session s, Trainer.Task task, RingStep st) {
    long t0 = System.nanoTime();
    long cpu0 = BlockExchange.cpuTime();
    Batch batch = st.batch;
    int examples = batch == null ? 0 : batch.size();
    long[] mark = batch == null ? null
        : new long[] {task.lease().epoch(), task.lease().task(), batch.positionAfter().offset()};
    List<String> order = s.model().blocks();
    StepReduction reduction = new StepReduction(link.size(), link.position(), st.step, order.size(), examples,
        st.leaving, mark, link::send);
    st.reduction = reduction;
    // A bucket per block: messages stay within the channel's frame whatever a parameter's size.
    Consumer<Parameter> buckets = p -> {
      for (BlockSlice slice : s.model().slicesOf(p)) {
        reduction.start(order.indexOf(slice.entityId()), p.grad().data(), slice.offset(), slice.length());
      }
    };
    st.loss = Float.NaN;
    if (batch != null) {
      s.model().beginForward(batch);
      st.loss = s.model().finishForwardBackward(batch, buckets);
    } else {
      for (Parameter p : s.model().parameters()) buckets.accept(p);
    }
    st.computeStarted = t0;
    st.computed = System.nanoTime();
    st.computeCpu = BlockExchange.cpuTime() - cpu0;
    link.drain(st.step, reduction::received);
    return reducing(s, task, st);
  }

  private Behavior<Trainer.Command> reducing(Session s, Trainer.Task task, RingStep st) {
    if (st.reduction.done()) return reduced(s, task, st);
    long epoch = link.epoch();
    if (!stallCheckPending) {
      stallCheckPending = true;
      context.scheduleOnce(setup.settings().heartbeatInterval(), context.getSelf(), new StallCheck(epoch, st.step));
    }
    return trainer.phase(s, () -> st.stopRequested, membership(Behaviors.receive(Trainer.Command.class)
        .onMessage(RingLink.ChunkArrived.class, m -> {
          if (m.epoch() != epoch || m.step() != st.step) return same(() -> link.early(m, lastStep));
          st.reduction.received(m.chunk());
          return st.reduction.done() ? reduced(s, task, st) : Behaviors.same();
        })
        .onMessage(StallCheck.class, m -> same(() -> {
          // Still in the step it was scheduled in: the ring has not moved for a heartbeat interval.
          stallCheckPending = m.epoch() == epoch && m.step() == st.step;
          if (stallCheckPending) {
            askMembers();
            context.scheduleOnce(setup.settings().heartbeatInterval(), context.getSelf(), m);
          }
        }))
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> same(() -> st.stopRequested = true)),
        () -> resyncing(s, task, lastStep, st, false, false), Behaviors::same));
  }

  /**
   * A phase's handlers of membership news: {@code onNewer} when it names a newer epoch than known,
   * else {@code otherwise}.
   */
  private BehaviorBuilder<Trainer.Command> membership(BehaviorBuilder<Trainer.Command> phase,
      Supplier<Behavior<Trainer.Command>> onNewer, Supplier<Behavior<Trainer.Command>> otherwise) {
    return phase
        .onMessage(Members.class, m -> {
          if (m.failure() == null) checkpoints.status(m.checkpointStep(), m.checkpointDir());
          if (m.failure() == null) return learn(m.epoch(), m.members()) ? onNewer.get() : otherwise.get();
          context.getLog().warn("trainer {}: no member list from the master ({}), asking again", setup.trainerId(),
              m.failure().getMessage());
          askMembers();
          return Behaviors.same();
        })
        .onMessage(Trainer.Notice.class, n -> n.notice() instanceof TrainerNotice.MembersChanged, n -> {
          TrainerNotice.MembersChanged c = (TrainerNotice.MembersChanged) n.notice();
          return learn(c.epoch(), c.members()) ? onNewer.get() : Behaviors.same();
        })
        .onMessage(RingLink.Sync.class, m -> {
          keep(m);
          return otherwise.get();
        });
  }

  private Behavior<Trainer.Command> reduced(Session s, Trainer.Task task, RingStep st) {
    StepReduction r = st.reduction;
    long reducedAt = System.nanoTime();
    replica.apply(r.totalExamples());
    handover.stepApplied(r.step(), r.marks(), link.members());
    long applied = System.nanoTime();
    // In the profile the ring's wait is the push wait, the optimizer step the pull wait.
    profile.completed(new StepTimes(st.computeStarted, st.computed, st.computeCpu, reducedAt, applied), applied);
    return applied(s, task, st, r.leaving());
  }

  /** {@code st} is applied to the replica (by this member, or by the one whose replica it took). */
  private Behavior<Trainer.Command> applied(Session s, Trainer.Task task, RingStep st, boolean leaving) {
    lastStep = st.step;
    departures.applied(lastStep);
    lastLeaving = leaving;
    counts.stepCompleted(st.step);
    if (heldReport != null) reportHeld(s);
    if (st.batch != null) {
      setup.listener().onStep(setup.trainerId(), st.step, st.loss, st.examples(), st.computed - st.computeStarted);
      heldReport = new long[] {task.lease().epoch(), task.lease().task(), st.step, st.batch.positionAfter().offset()};
    }
    if (st.step % setup.settings().publishEvery() == 0) publish(s, st.step);
    checkpoints.applied(s, st.step, link.position(), link.epoch(), replica, handover);
    boolean taskDone = task == null || task.reader().epochDone();
    if (leaving) {
      reportHeld(s);
      return trainer.ringStepDone(s, task, st.step, st.stopRequested ? "stopped" : "the ring's last step");
    }
    // The other members learn in the next step that this one leaves, and leave with it.
    if (st.stopRequested) return step(s, task, st.step, false, true);
    long steps = s.job().steps();
    if (taskDone && heldReport != null && (steps <= 0 || st.step < steps)) {
      // The master must know where the task ended before the next lease, and may learn it only
      // once the ring applied the step after its last batch: one step without data first.
      return step(s, null, st.step, false, false);
    }
    reportHeld(s);
    return trainer.ringStepDone(s, task, st.step, null);
  }

  /** Reports the held step: at the end of a task the master must know where it ended before the next lease. */
  private void reportHeld(Session s) {
    if (heldReport == null) return;
    reports.completed((int) heldReport[0], (int) heldReport[1], heldReport[2], heldReport[3]);
    heldReport = null;
    trainer.sendReport(s);
  }

  // ---- forming the ring, and re-forming it on a new membership ----

  /**
   * Forms the ring of the newest membership and brings every member to the same step, then goes on
   * with {@code inFlight} (a step computed but not applied, which goes round the new ring again) or
   * with the step after {@code previousStep} as {@link #step} would.
   */
  private Behavior<Trainer.Command> resyncing(Session s, Trainer.Task task, long previousStep, RingStep inFlight,
      boolean withData, boolean leaving) {
    link.join(s.job().jobId());
    // Its answer moves this phase on, whatever is known already.
    askMembers();
    boolean[] synced = {false};
    Supplier<Behavior<Trainer.Command>> progress = () -> {
      if (!synced[0]) {
        if (members == null || !members.contains(setup.trainerId()) || !link.form(membersEpoch, members)) {
          return Behaviors.same();
        }
        if (replica == null) lastStep = previousStep;
        ownSync = new RingLink.Sync(link.epoch(), setup.trainerId(), lastStep, replica != null);
        syncs.keySet().removeIf(e -> e < link.epoch());
        syncs.computeIfAbsent(link.epoch(), e -> new HashMap<>()).put(ownSync.trainerId(), ownSync);
        link.tellOthers(ownSync);
        synced[0] = true;
      }
      Map<String, RingLink.Sync> in = syncs.getOrDefault(link.epoch(), Map.of());
      if (!in.keySet().containsAll(link.members()) || !checkpoints.statusKnown()) return Behaviors.same();
      return level(s, task, inFlight, withData, leaving, in);
    };
    BooleanSupplier stop = () -> inFlight != null && inFlight.stopRequested;
    return trainer.phase(s, stop, membership(Behaviors.receive(Trainer.Command.class)
        .onMessage(RingLink.Hello.class, m -> {
          hello(m);
          return progress.get();
        })
        .onMessage(RingLink.Listed.class, m -> {
          link.listed(m);
          return progress.get();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> {
          if (inFlight != null) return same(() -> inFlight.stopRequested = true);
          // Nothing of the ring in flight to hand over.
          return trainer.ringStepDone(s, task, replica == null ? previousStep : lastStep, "stopped");
        }), () -> resyncing(s, task, previousStep, inFlight, withData, leaving), progress));
  }

  /**
   * Every member of the new ring said how far it got: the newest step of any replica is the ring's;
   * one member at it sends its replica to each member behind it or without one.
   */
  private Behavior<Trainer.Command> level(Session s, Trainer.Task task, RingStep inFlight, boolean withData,
      boolean leaving, Map<String, RingLink.Sync> in) {
    long newest = -1;
    String source = null;
    for (RingLink.Sync m : in.values()) {
      if (!m.hasReplica()) continue;
      if (m.lastStep() > newest || (m.lastStep() == newest && m.trainerId().compareTo(source) < 0)) {
        newest = m.lastStep();
        source = m.trainerId();
      }
    }
    if (replica == null) {
      replica = newReplica(s);
      // No member holds one: every trainer had left, and the master went back to the ring's checkpoint.
      if (source == null) lastStep = Math.max(lastStep, checkpoints.restore(replica, handover));
    }
    if (setup.trainerId().equals(source)) {
      List<String> behind = new ArrayList<>();
      for (RingLink.Sync m : in.values()) {
        if (!m.hasReplica() || m.lastStep() < newest) behind.add(m.trainerId());
      }
      if (!behind.isEmpty()) {
        RingLink.TransferEnd end = handover.end(link.epoch(), newest, replica, lastLeaving);
        for (String m : behind) link.transfer(m, newest, replica.export(), end);
      }
    }
    RingLink.Sync own = in.get(setup.trainerId());
    if (source != null && (!own.hasReplica() || own.lastStep() < newest)) {
      return receiving(s, task, inFlight, withData, leaving, newest);
    }
    return levelled(s, task, inFlight, withData, leaving);
  }

  private Replica newReplica(Session s) {
    JobSpec job = s.job();
    return new Replica(s.model().parameters(),
        OptimizerSpec.parse(job.optimizer()).withWeightDecay(job.weightDecay()).create(),
        LearningRateSchedule.parse(job.lrSchedule(), job.lr()), job.examplesPerUpdate());
  }

  /** Waiting for the replica of step {@code step} from the member that has it. */
  private Behavior<Trainer.Command> receiving(Session s, Trainer.Task task, RingStep inFlight, boolean withData,
      boolean leaving, long step) {
    long epoch = link.epoch();
    handover.expect(epoch, step);
    Supplier<Behavior<Trainer.Command>> complete = () -> {
      if (!handover.complete(epoch, step)) return Behaviors.same();
      boolean ringLeaves = handover.restore(replica);
      context.getLog().info("trainer {}: took the replica of step {} in ring epoch {} (it was at step {})",
          setup.trainerId(), step, epoch, lastStep);
      settle(s, step);
      // Its step in flight was that step: applied by the ring with this member's batch in it.
      if (inFlight != null && inFlight.step == step) return applied(s, task, inFlight, ringLeaves);
      lastStep = step;
      lastLeaving = ringLeaves;
      departures.applied(lastStep);
      if (ringLeaves) return trainer.ringStepDone(s, task, step, "the ring's last step");
      return step(s, task, step, withData, leaving);
    };
    if (handover.complete(epoch, step)) return complete.get();
    BooleanSupplier stop = () -> inFlight != null && inFlight.stopRequested;
    return trainer.phase(s, stop, membership(Behaviors.receive(Trainer.Command.class)
        .onMessage(RingLink.TransferPart.class, m -> {
          handover.part(m);
          return complete.get();
        })
        .onMessage(RingLink.TransferEnd.class, m -> {
          handover.end(m);
          return complete.get();
        })
        .onMessageEquals(Trainer.Stop.INSTANCE, () -> same(() -> {
          if (inFlight != null) inFlight.stopRequested = true;
        })), () -> resyncing(s, task, lastStep, inFlight, withData, leaving), Behaviors::same));
  }

  /** This member is at the ring's step: its step in flight (if any) goes round the new ring. */
  private Behavior<Trainer.Command> levelled(Session s, Trainer.Task task, RingStep inFlight, boolean withData,
      boolean leaving) {
    settle(s, lastStep);
    if (inFlight == null) return step(s, task, lastStep, withData, leaving);
    RingStep again = new RingStep(inFlight.step, inFlight.batch, inFlight.leaving);
    again.stopRequested = inFlight.stopRequested;
    return compute(s, task, again);
  }

  /**
   * The first member of the ring tells the master where every member's task was applied up to, so
   * it settles those of members that departed or restarted ({@link JobProtocol.SettleFromRing}).
   */
  private void settle(Session s, long step) {
    if (!link.members().get(0).equals(setup.trainerId())) return;
    setup.master().tell(new JobProtocol.SettleFromRing(setup.trainerId(), s.generation(), link.epoch(), step,
        handover.marks()));
  }

  private void askMembers() {
    context.ask(JobProtocol.JobStatus.class, setup.master(), setup.settings().askTimeout(), JobProtocol.GetStatus::new,
        (r, failure) -> r == null ? new Members(-1, null, -1, "", failure)
            : new Members(r.membershipEpoch(), r.members(), r.checkpointStep(), r.checkpointDir(), null));
  }

  private void publish(Session s, long step) {
    publishing.publish(s, step, link, replica.examplesApplied(), false);
  }

  /** Whether {@link #leave} handed the replica over. */
  boolean left() {
    return left;
  }

  /**
   * Before leaving: publishes the last step (unless it was just published), shows the replica to
   * the listener, and waits until every publication was answered and every other member of the
   * ring applied the last step ({@link RingDepartures}), then {@code then}.
   */
  Behavior<Trainer.Command> leave(Session s, Supplier<Behavior<Trainer.Command>> then) {
    left = true;
    reportHeld(s);
    if (replica != null && lastStep > 0) {
      publishing.publishLast(s, lastStep, link, replica.examplesApplied(), setup.listener());
    }
    long epoch = link.epoch();
    boolean[] waited = {false};
    if (replica != null && link.formed() && link.size() > 1) {
      departures.leave(lastStep, link.members());
      context.scheduleOnce(setup.settings().failureTimeout(), context.getSelf(), new DeparturesWaited());
    }
    // A newer membership: a member died (or joined) and the others re-form the ring without this one.
    BooleanSupplier ready = () -> publishing.answered()
        && (departures.allAnswered() || membersEpoch > epoch || waited[0]);
    if (ready.getAsBoolean()) return then.get();
    Function<Runnable, Behavior<Trainer.Command>> after = handler -> {
      handler.run();
      return ready.getAsBoolean() ? then.get() : Behaviors.same();
    };
    return trainer.phase(s, () -> true, Behaviors.receive(Trainer.Command.class)
        .onMessage(ReplicaPublishing.Published.class, m -> after.apply(() -> publishing.published(m)))
        .onMessage(RingLink.AppliedUpTo.class, m -> after.apply(() -> departures.answered(m)))
        .onMessage(Trainer.Notice.class, n -> n.notice() instanceof TrainerNotice.MembersChanged,
            n -> after.apply(() -> noticed(n.notice())))
        .onMessage(Members.class, m -> m.failure() != null ? Behaviors.same()
            : after.apply(() -> learn(m.epoch(), m.members())))
        .onMessage(DeparturesWaited.class, m -> after.apply(() -> {
          if (!departures.allAnswered()) {
            context.getLog().warn("trainer {}: leaving after step {} before every member said it applied it",
                setup.trainerId(), lastStep);
          }
          waited[0] = true;
        }))
        .onMessageEquals(Trainer.Stop.INSTANCE, Behaviors::same));
  }
}
