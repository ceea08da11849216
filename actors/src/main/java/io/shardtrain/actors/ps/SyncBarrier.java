package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockState.Contribution;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * The barrier of a sync block's pending step: the membership in force (its epoch and trainers) and
 * the contributions to the step, held in arrival order (journal order) and summed in trainer order
 * ({@link #byTrainer}), so a step's bits depend neither on which push arrived first nor on the
 * order a replay reads them in. The step is complete once a membership was received and all its
 * trainers contributed. Plain data owned by {@link BlockState}; it changes only through the state's event
 * handlers.
 */
final class SyncBarrier {
  private long epoch;
  private List<String> members;
  private List<Contribution> pending;

  SyncBarrier() {
    this(0, List.of(), List.of());
  }

  SyncBarrier(long epoch, List<String> members, List<Contribution> pending) {
    this.epoch = epoch;
    this.members = new ArrayList<>(members);
    this.pending = new ArrayList<>(pending);
  }

  /** An independent copy; contributions are immutable and shared. */
  SyncBarrier copy() {
    return new SyncBarrier(epoch, members, pending);
  }

  /** The membership epoch in force; 0 before the first. */
  long epoch() {
    return epoch;
  }

  /** The trainers of the membership in force (a read-only view). */
  List<String> members() {
    return Collections.unmodifiableList(members);
  }

  /** Whether no trainer takes part: a membership was received (its job ended, or every trainer left), and it is empty. */
  boolean unused() {
    return epoch > 0 && members.isEmpty();
  }

  /** The contributions to the pending step in arrival order (a read-only view). */
  List<Contribution> pending() {
    return Collections.unmodifiableList(pending);
  }

  /** Whether the pending step has contributions. */
  boolean isWaiting() {
    return !pending.isEmpty();
  }

  boolean hasContributed(String trainerId) {
    for (Contribution c : pending) {
      if (c.trainerId().equals(trainerId)) return true;
    }
    return false;
  }

  /** Trainers of the membership that have not contributed to the pending step, in membership order. */
  List<String> missing() {
    List<String> out = new ArrayList<>();
    for (String m : members) {
      if (!hasContributed(m)) out.add(m);
    }
    return out;
  }

  /**
   * The contributions to the pending step in trainer-id order, the order a step sums them in: with
   * three or more, float addition makes the sum's last bits depend on the order.
   */
  List<Contribution> byTrainer() {
    List<Contribution> out = new ArrayList<>(pending);
    out.sort(Comparator.comparing(Contribution::trainerId));
    return out;
  }

  /** Trainers that contributed to the pending step, in arrival order. */
  List<String> contributors() {
    List<String> out = new ArrayList<>(pending.size());
    for (Contribution c : pending) out.add(c.trainerId());
    return out;
  }

  /** Whether a contribution of {@code trainerId} would complete the pending step under the membership in force. */
  boolean completedBy(String trainerId) {
    return completes(epoch, members, trainerId);
  }

  /** Whether the pending step, as it stands, is complete under membership {@code epoch} of {@code memberSet}. */
  boolean completeUnder(long epoch, List<String> memberSet) {
    return completes(epoch, memberSet, null);
  }

  private boolean completes(long epoch, List<String> memberSet, String extra) {
    if (epoch <= 0 || (pending.isEmpty() && extra == null)) return false;
    for (String m : memberSet) {
      if (!m.equals(extra) && !hasContributed(m)) return false;
    }
    return true;
  }

  /** The examples behind the pending step: its contributions' weights, each rounded, those of weight 0 left out. */
  long examples() {
    long n = 0;
    for (Contribution c : pending) {
      if (c.weight() <= 0f) continue;
      n += Math.round(c.weight());
    }
    return n;
  }

  void setMembership(long epoch, List<String> members) {
    this.epoch = epoch;
    this.members = new ArrayList<>(members);
  }

  void add(Contribution c) {
    pending.add(c);
  }

  /** Forgets the contributions to the pending step (it was applied, or abandoned). */
  void clearPending() {
    pending = new ArrayList<>();
  }
}
