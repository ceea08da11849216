package io.shardtrain.actors.ps;

import akka.persistence.typed.SnapshotAdapter;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockState.Held;
import java.util.ArrayList;
import java.util.List;

/**
 * What a block journals ({@code shardtrain.ps.durability}), chosen once per block: {@link Exact}
 * journals every event, so a recovery rebuilds exactly the state the block had; {@link Checkpoints}
 * journals memberships and checkpoints only, so a recovery lands on the newest checkpoint and a
 * failure rolls the whole job back to one.
 *
 * <p>Besides the state's event handler, the live state changes in the {@code record} of each, which
 * applies what it deliberately does not journal (both: sync contributions until their step is
 * applied; checkpoint durability: the steps too), and in {@link Exact#captured}, which holds its
 * checkpoints in memory (exact durability rebuilds everything else from the journal, so its
 * checkpoints are only ever read out).
 */
interface BlockDurability {

  static BlockDurability of(PsSettings settings) {
    return settings.checkpointDurability() ? new Checkpoints() : new Exact();
  }

  /** Why a block of {@code spec} cannot have this durability, or null when it can. */
  String refusal(BlockSpec spec);

  /**
   * Whether a sync push belongs to a timeline this block left (an older generation) or has not
   * reached (a step it recovered away from): not an error, the trainer waits for the rollback.
   */
  boolean leftBehind(BlockState state, PushGradient push);

  /** Whether the block may roll back to a held checkpoint. */
  boolean rollsBack();

  /**
   * Whether a sync push is acknowledged only once its step is applied (and journaled), rather than
   * when it arrives.
   */
  boolean acksWithStep();

  /**
   * The events to journal for {@code events}, plus the capture of the version reached when one of
   * {@code captures} waits for it and this durability journals captures. May be empty.
   */
  List<Event> record(BlockState state, List<Event> events, PendingCaptures captures);

  /**
   * The checkpoint at {@code step} to answer the requests that waited for it with, once the block
   * reached it; null when the block passed {@code step} without capturing it.
   */
  Held captured(BlockState state, long step, long keepFrom);

  /** What the snapshot store gets: a copy, since the store serializes later while the live state moves on. */
  BlockState snapshot(BlockState state);

  /** The block's snapshots: {@link #snapshot} going to the journal, a copy coming back. */
  default SnapshotAdapter<BlockState> snapshotAdapter() {
    BlockDurability self = this;
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(BlockState state) {
        return self.snapshot(state);
      }

      @Override
      public BlockState fromJournal(Object from) {
        return ((BlockState) from).copy();
      }
    };
  }

  /**
   * Nothing acknowledged is lost, journaling what was applied: an async push as it is applied; a
   * sync step as one {@link StepCommitted} holding the weighted mean it applied, the trainers'
   * contributions held in memory until then (and their pushes acknowledged with the step).
   * Checkpoints are held in memory.
   */
  final class Exact implements BlockDurability {
    @Override
    public String refusal(BlockSpec spec) {
      return null;
    }

    @Override
    public boolean leftBehind(BlockState state, PushGradient push) {
      return false;
    }

    @Override
    public boolean rollsBack() {
      return false;
    }

    @Override
    public boolean acksWithStep() {
      return true;
    }

    /**
     * Applies sync contributions to {@code state} at once (the one other change it makes outside
     * the event handler) and journals a completed step as the {@link StepCommitted} of what they add
     * up to; journals every other event.
     */
    @Override
    public List<Event> record(BlockState state, List<Event> events, PendingCaptures captures) {
      if (!state.isSync()) return events;
      List<Event> journaled = new ArrayList<>(events.size());
      for (Event e : events) {
        if (e instanceof GradientReceived || e instanceof GradientSkipped) {
          state.apply(e);
        } else if (e instanceof StepApplied a) {
          journaled.add(state.commit(a.step()));
        } else {
          journaled.add(e);
        }
      }
      return journaled;
    }

    /** Captures the live state when it is at {@code step}: the one change it makes outside the event handler. */
    @Override
    public Held captured(BlockState state, long step, long keepFrom) {
      if (step == state.version()) state.holdCapture(keepFrom);
      return state.checkpoint(step);
    }

    @Override
    public BlockState snapshot(BlockState state) {
      // The journal rebuilds the state; checkpoints are only read out, and not kept across a restart.
      return state.copyWithoutCheckpoints();
    }
  }

  /** Memberships and checkpoints are journaled; gradients and steps are applied in memory only. */
  final class Checkpoints implements BlockDurability {
    @Override
    public String refusal(BlockSpec spec) {
      if (spec.mode() == BlockSpec.Mode.SYNC) return null;
      return "block " + spec.entityId() + ": checkpoint durability needs sync mode (async blocks"
          + " have no global step to roll back to); use shardtrain.ps.durability = exact";
    }

    @Override
    public boolean leftBehind(BlockState state, PushGradient push) {
      return push.generation() < state.generation() || push.step() > state.version() + 1;
    }

    @Override
    public boolean rollsBack() {
      return true;
    }

    @Override
    public boolean acksWithStep() {
      return false;
    }

    /**
     * Journals the memberships and applies every other event to {@code state} at once, through the
     * event handler's own code: the one change it makes outside the event handler. When that
     * reaches a version a checkpoint waits for, the capture is journaled too.
     */
    @Override
    public List<Event> record(BlockState state, List<Event> events, PendingCaptures captures) {
      List<Event> journaled = new ArrayList<>();
      for (Event e : events) {
        if (e instanceof MembershipUpdated) {
          journaled.add(e);
        } else {
          state.apply(e);
        }
      }
      long v = state.version();
      if (captures.waitsAt(v)) {
        Held h = state.capture();
        journaled.add(new CheckpointTaken(v, captures.keepFrom(v), h.values(), h.slots(), h.updates(), h.examples()));
      }
      return journaled;
    }

    /** Journaled as a {@link CheckpointTaken} when the block reached {@code step}, so held already. */
    @Override
    public Held captured(BlockState state, long step, long keepFrom) {
      return state.checkpoint(step);
    }

    @Override
    public BlockState snapshot(BlockState state) {
      return state.asOfNewestCheckpoint();
    }
  }
}
