package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ReadCheckpoint;
import io.shardtrain.actors.ps.BlockProtocol.RollBack;
import io.shardtrain.actors.ps.BlockProtocol.RolledBack;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.actors.ps.BlockState.Held;
import io.shardtrain.compute.NumericChecks;
import java.util.List;
import java.util.function.LongFunction;

/**
 * What a command may do to a block, decided from its state alone: the refusals, each with the
 * message its sender gets, and for a push the events it records or the answer it gets at once. It
 * counts pushes and refusals in the block's {@link BlockCounters}, and changes nothing else; the
 * block's actor carries the decisions out.
 */
final class BlockRules {

  /**
   * What a push does: refused ({@code error}), or answered with {@code ack} of the block's version
   * when the answer goes out, after recording {@code events} (none: the push changes nothing).
   */
  record PushOutcome(String error, List<Event> events, LongFunction<PushAck> ack) {
    static PushOutcome refused(String error) {
      return new PushOutcome(error, List.of(), null);
    }

    static PushOutcome answered(LongFunction<PushAck> ack) {
      return new PushOutcome(null, List.of(), ack);
    }

    /** Nothing to write and nothing to answer now: the answer is held for a later write. */
    static PushOutcome held() {
      return new PushOutcome(null, List.of(), null);
    }

    static PushOutcome recorded(List<Event> events, LongFunction<PushAck> ack) {
      return new PushOutcome(null, events, ack);
    }
  }

  private final String entityId;
  private final PsSettings.NonFinitePolicy nonFinite;
  private final BlockDurability durability;
  private final BlockCounters counters;

  BlockRules(String entityId, PsSettings settings, BlockDurability durability, BlockCounters counters) {
    this.entityId = entityId;
    this.nonFinite = settings.nonFinite();
    this.durability = durability;
    this.counters = counters;
  }

  /** Why {@code cmd} may not initialise the block, or null; an initialised block accepts its own spec again. */
  String initializeRefusal(BlockState state, Initialize cmd) {
    return initializeRefusal(state, "Initialize", cmd.spec(), cmd.values());
  }

  /**
   * Why {@code cmd} may not resume the block, or null: what {@link #initializeRefusal} checks, and
   * a sync spec, one slot array of the block's length per optimizer slot, and no negative count.
   */
  String resumeRefusal(BlockState state, BlockProtocol.Resume cmd) {
    BlockEvents.Resumed r = cmd.state();
    String refusal = initializeRefusal(state, "Resume", r.spec(), r.values());
    if (refusal != null) return refusal;
    if (r.spec().mode() != BlockSpec.Mode.SYNC) {
      return "Resume of block " + entityId + ": only a sync block resumes from a checkpoint, not " + r.spec().mode();
    }
    int slots = r.spec().optimizer().create().slotCount();
    if (r.slots().length != slots) {
      return "Resume of block " + entityId + ": " + r.slots().length + " optimizer slots, " + r.spec().optimizer().kind()
          + " keeps " + slots;
    }
    for (float[] slot : r.slots()) {
      if (slot.length != r.spec().length()) {
        return "Resume of block " + entityId + ": an optimizer slot of " + slot.length + " values, the block has "
            + r.spec().length();
      }
    }
    if (r.step() < 0 || r.updates() < 0 || r.examples() < 0) {
      return "Resume of block " + entityId + ": step, updates and examples must be >= 0, got " + r.step() + ", "
          + r.updates() + ", " + r.examples();
    }
    return null;
  }

  private String initializeRefusal(BlockState state, String command, BlockSpec spec, float[] values) {
    if (spec == null || values == null) return command + " of block " + entityId + " needs a spec and values";
    if (!BlockSlice.names(entityId, spec.parameter(), spec.index())) {
      return command + " for block " + spec.entityId() + " was sent to block " + entityId;
    }
    if (values.length != spec.length()) {
      return command + " of block " + entityId + ": " + values.length + " values, the spec says length "
          + spec.length();
    }
    int bad = NumericChecks.firstNonFinite(values);
    if (bad >= 0) {
      return command + " of block " + entityId + ": non-finite initial value " + values[bad] + " at index " + bad;
    }
    String refusal = durability.refusal(spec);
    if (refusal != null) return refusal;
    if (state.isInitialised() && !state.spec().equals(spec)) {
      return "block " + entityId + " is already initialised with another job description: "
          + differences(state.spec(), spec, "") + " (a job id keeps its description: submit the new job under"
          + " another id)";
    }
    return null;
  }

  /** Each component in which two records (nested ones by theirs) differ, as "name this, not that". */
  static String differences(Record held, Record asked, String prefix) {
    java.util.List<String> out = new java.util.ArrayList<>();
    for (java.lang.reflect.RecordComponent c : held.getClass().getRecordComponents()) {
      Object a;
      Object b;
      try {
        a = c.getAccessor().invoke(held);
        b = c.getAccessor().invoke(asked);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(e);
      }
      if (java.util.Objects.equals(a, b)) continue;
      String name = prefix + c.getName();
      if (a instanceof Record ra && b instanceof Record rb && a.getClass() == b.getClass()) {
        out.add(differences(ra, rb, name + "."));
      } else {
        out.add(name + " " + a + ", not " + b);
      }
    }
    return String.join("; ", out);
  }

  /**
   * What {@code cmd} does to the block, whose async pushes in {@code unwritten} are accepted but not
   * journaled (nor applied) yet.
   */
  PushOutcome push(BlockState state, PushGradient cmd, GroupCommit unwritten) {
    counters.pushes++;
    counters.meters.pushed(cmd.values() == null ? 0 : cmd.values().length);
    if (!state.isInitialised()) {
      counters.rejectedNotInitialised++;
      return PushOutcome.refused("block " + entityId + " is not initialised; push of trainer " + cmd.trainerId()
          + " for step " + cmd.step() + " refused");
    }
    if (state.spec().mode() == BlockSpec.Mode.ALLREDUCE) {
      counters.rejectedMalformed++;
      return PushOutcome.refused("block " + entityId + " is in all-reduce mode and takes no gradients; push of"
          + " trainer " + cmd.trainerId() + " for step " + cmd.step() + " refused");
    }
    if (cmd.trainerId() == null || cmd.trainerId().isBlank()) {
      counters.rejectedMalformed++;
      return PushOutcome.refused("push to block " + entityId + " has a blank trainer id");
    }
    if (cmd.step() < 1) {
      counters.rejectedMalformed++;
      return PushOutcome.refused("push of trainer " + cmd.trainerId() + " to block " + entityId
          + ": step must be >= 1, not " + cmd.step());
    }
    int length = state.spec().length();
    if (isIdle(cmd)) {
      // Sync: a trainer with no data for this step still takes part in the barrier, contributing
      // nothing. Async: nothing to apply (the block already has the batch's examples).
      return state.isSync() ? syncPush(state, cmd) : PushOutcome.answered(Duplicate::new);
    }
    if (cmd.values() == null || cmd.values().length != length) {
      counters.rejectedBadLength++;
      return PushOutcome.refused("gradient of length " + (cmd.values() == null ? "null" : cmd.values().length)
          + " from trainer " + cmd.trainerId() + " does not match block " + entityId + " of length " + length);
    }
    return state.isSync() ? syncPush(state, cmd) : asyncPush(state, cmd, unwritten);
  }

  private PushOutcome syncPush(BlockState state, PushGradient cmd) {
    long v = state.version();
    String trainer = cmd.trainerId();
    SyncBarrier barrier = state.barrier();
    if (durability.leftBehind(state, cmd)) return PushOutcome.answered(RolledBack::new);
    if (cmd.step() <= v || (cmd.step() == v + 1 && barrier.hasContributed(trainer))) {
      counters.duplicates++;
      return PushOutcome.answered(Duplicate::new);
    }
    if (cmd.step() > v + 1) {
      counters.rejectedAhead++;
      return PushOutcome.refused("push of trainer " + trainer + " for step " + cmd.step() + " is ahead of block "
          + entityId + " at version " + v + " (it expects step " + (v + 1) + ")");
    }
    if (!isIdle(cmd) && (!(cmd.weight() > 0f) || Float.isInfinite(cmd.weight()))) {
      counters.rejectedMalformed++;
      return PushOutcome.refused("push of trainer " + trainer + " for step " + cmd.step() + " to block " + entityId
          + ": weight must be a finite number > 0, not " + cmd.weight());
    }
    Event received;
    LongFunction<PushAck> ack;
    boolean completes = barrier.completedBy(trainer);
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) {
      if (nonFinite == PsSettings.NonFinitePolicy.REJECT) {
        counters.rejectedNonFinite++;
        return PushOutcome.refused(nonFiniteMessage(cmd, bad));
      }
      counters.skippedNonFinite++;
      // Recorded, so the barrier does not wait for a trainer whose gradient was dropped.
      received = new GradientSkipped(trainer, cmd.step(), cmd.mark());
      ack = Skipped::new;
    } else {
      received = new GradientReceived(trainer, cmd.step(), cmd.weight(), cmd.values(), cmd.mark());
      ack = completes ? Applied::new : Accepted::new;
    }
    return PushOutcome.recorded(completes ? List.of(received, new StepApplied(cmd.step())) : List.of(received), ack);
  }

  private PushOutcome asyncPush(BlockState state, PushGradient cmd, GroupCommit unwritten) {
    long v = state.version();
    String trainer = cmd.trainerId();
    Long last = state.lastSteps.get(trainer);
    if (last != null && cmd.step() <= last) {
      counters.duplicates++;
      return PushOutcome.answered(Duplicate::new);
    }
    if (unwritten.holdsUpTo(trainer, cmd.step())) {
      // Its first copy is not journaled yet: answered with the group, once it is.
      counters.duplicates++;
      unwritten.repeat(new PendingAck(cmd.replyTo(), Duplicate::new, cmd.wanted()));
      return PushOutcome.held();
    }
    if (cmd.baseVersion() < 0 || cmd.baseVersion() > v) {
      counters.rejectedAhead++;
      return PushOutcome.refused("push of trainer " + trainer + " for step " + cmd.step() + ": base version "
          + cmd.baseVersion() + " is not one block " + entityId + " has had (its version is " + v + ")");
    }
    long maxStaleness = state.spec().maxStaleness();
    // Staleness at the version the push is applied to: after the pushes written before it.
    if (maxStaleness >= 0 && v + unwritten.size() - cmd.baseVersion() > maxStaleness) {
      counters.rejectedStale++;
      return PushOutcome.answered(Stale::new);
    }
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) {
      if (nonFinite == PsSettings.NonFinitePolicy.REJECT) {
        counters.rejectedNonFinite++;
        return PushOutcome.refused(nonFiniteMessage(cmd, bad));
      }
      counters.skippedNonFinite++;
      return PushOutcome.answered(Skipped::new);
    }
    return PushOutcome.recorded(List.of(new GradientApplied(trainer, cmd.step(), cmd.weight(), cmd.values(), cmd.mark())),
        Applied::new);
  }

  /** An empty, zero-weight sync push: the trainer had no data for this step. */
  private static boolean isIdle(PushGradient cmd) {
    return cmd.weight() == 0f && cmd.values() != null && cmd.values().length == 0;
  }

  private String nonFiniteMessage(PushGradient cmd, int index) {
    return "gradient of trainer " + cmd.trainerId() + " for step " + cmd.step() + " to block " + entityId
        + " has a non-finite value " + cmd.values()[index] + " at index " + index;
  }

  /** Why {@code cmd} cannot be answered, or null. */
  String pullRefusal(BlockState state, Pull cmd) {
    if (state.isInitialised()) return null;
    counters.rejectedNotInitialised++;
    return "block " + entityId + " is not initialised; pull for version " + cmd.minVersion() + " refused";
  }

  /**
   * Why a replica's {@code cmd} cannot be kept, or null: the block must be an initialised all-reduce
   * block, and the values as long as it and finite.
   */
  String publishRefusal(BlockState state, Publish cmd) {
    String what = "publish of step " + cmd.step() + " by " + cmd.trainerId() + " to block " + entityId;
    if (!state.isInitialised()) return what + ": the block is not initialised";
    if (state.spec().mode() != BlockSpec.Mode.ALLREDUCE) {
      return what + ": the block is in " + state.spec().mode() + " mode; only all-reduce blocks keep published values";
    }
    if (cmd.values() == null || cmd.values().length != state.spec().length()) {
      return what + ": " + (cmd.values() == null ? "no" : String.valueOf(cmd.values().length))
          + " values, the block holds " + state.spec().length();
    }
    if (cmd.step() < 1 || cmd.examples() < 0) {
      return what + ": step must be >= 1 and examples >= 0, not " + cmd.step() + " and " + cmd.examples();
    }
    int bad = NumericChecks.firstNonFinite(cmd.values());
    if (bad >= 0) return what + ": non-finite value " + cmd.values()[bad] + " at index " + bad;
    return null;
  }

  /** Why {@code cmd} is no membership, or null. */
  String membershipRefusal(UpdateMembership cmd) {
    if (cmd.trainers() == null) {
      return "membership epoch " + cmd.epoch() + " for block " + entityId + " has no trainer list";
    }
    for (String t : cmd.trainers()) {
      if (t == null || t.isBlank()) {
        return "membership epoch " + cmd.epoch() + " for block " + entityId + " holds a blank trainer id";
      }
    }
    return null;
  }

  /** Why the block cannot capture the step {@code cmd} names, or null. */
  String checkpointRefusal(BlockState state, Checkpoint cmd) {
    if (!state.isInitialised()) {
      return "block " + entityId + " is not initialised; no checkpoint at step " + cmd.step();
    }
    if (!state.isSync()) return "block " + entityId + " is async: checkpoints need sync mode (one global step)";
    if (cmd.step() < state.version()) {
      return "block " + entityId + " is at version " + state.version() + ", past checkpoint step " + cmd.step();
    }
    return null;
  }

  /** Why the block has no such checkpoint part as {@code cmd} asks for, or null. */
  String readRefusal(BlockState state, ReadCheckpoint cmd) {
    Held h = state.checkpoint(cmd.step());
    if (h == null) {
      return "block " + entityId + " holds no checkpoint at step " + cmd.step() + " (it holds "
          + state.checkpointSteps() + ")";
    }
    if (cmd.part() < 0 || cmd.part() > h.slots().length) {
      return "checkpoint part " + cmd.part() + " of block " + entityId + ": there are values (0) and "
          + h.slots().length + " optimizer slots";
    }
    return null;
  }

  /** Why the block cannot roll back as {@code cmd} asks, or null. */
  String rollBackRefusal(BlockState state, RollBack cmd) {
    if (!durability.rollsBack()) return "block " + entityId + " has exact durability; it never rolls back";
    if (state.checkpoint(cmd.step()) == null) {
      return "block " + entityId + " cannot roll back to step " + cmd.step() + ": it holds checkpoints "
          + state.checkpointSteps();
    }
    return null;
  }
}
