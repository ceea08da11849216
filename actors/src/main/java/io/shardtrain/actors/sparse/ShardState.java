package io.shardtrain.actors.sparse;

import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseEvents.GradientApplied;
import io.shardtrain.actors.sparse.SparseEvents.MembershipUpdated;
import io.shardtrain.actors.sparse.SparseEvents.RowsExpired;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.ShardHeader;
import io.shardtrain.actors.sparse.SparseEvents.ShardInitialized;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotBegun;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotCompleted;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.compute.sparse.SparseTable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sparse shard's state: its table's rows ({@link SparseTable}), version, membership, the
 * contributions to the pending sync step (held in memory, never journaled: their pushes are
 * acknowledged only with the step), each trainer's last async step, and where its snapshots
 * stand. Mutable, owned by the shard's actor; each event handler is a line or a loop.
 *
 * <p>Snapshot rows are restored only while {@link #restoring()} names their generation (the state
 * came from that snapshot's header); at run time those events repeat rows the state already has.
 */
final class ShardState {

  /** A trainer's push held for the pending sync step. */
  record Contribution(String trainerId, float weight, long[] ids, float[] grads) {}

  TableSpec spec;
  int shard = -1;
  SparseTable table;
  long version;
  long epoch;
  List<String> members = List.of();
  final List<Contribution> pending = new ArrayList<>();
  final Map<String, Long> lastSteps = new TreeMap<>();
  long examplesApplied;
  long rowsCreated;
  long rowsNotAdmitted;
  long rowsExpired;
  /** The last snapshot begun, and the sequence number of its header. */
  long generation;
  long sequenceNr;
  /** The sequence number of the header of the last snapshot whose rows are all in the journal (0: none). */
  long completedSequenceNr;
  /** The snapshot whose rows are being replayed onto this state, or -1. */
  long restoring = -1;

  boolean isInitialised() {
    return spec != null;
  }

  boolean isSync() {
    return spec.mode() == TableSpec.Mode.SYNC;
  }

  long restoring() {
    return restoring;
  }

  ShardState apply(Event event) {
    if (event instanceof StepCommitted e) {
      applyRows(e.ids(), e.mean(), e.sightings(), e.step());
      if (e.part() == e.parts() - 1) {
        version = e.step();
        examplesApplied += e.examples();
        pending.clear();
      }
    } else if (event instanceof GradientApplied e) {
      applyRows(e.ids(), e.grads(), null, version + 1);
      if (e.part() == e.parts() - 1) {
        version++;
        examplesApplied += Math.round(e.weight());
        lastSteps.put(e.trainerId(), e.step());
      }
    } else if (event instanceof SparseEvents.RowsLoaded e) {
      for (int k = 0; k < e.ids().length; k++) table.load(e.ids()[k], e.values(), k * spec.dim(), version);
    } else if (event instanceof RowsExpired e) {
      rowsExpired += table.evict(e.ids());
    } else if (event instanceof MembershipUpdated e) {
      epoch = e.epoch();
      members = e.trainers();
    } else if (event instanceof ShardInitialized e) {
      spec = e.spec();
      shard = e.shard();
      table = spec.newTable();
    } else if (event instanceof SnapshotBegun e) {
      generation = e.generation();
      sequenceNr = e.sequenceNr();
    } else if (event instanceof RowsSaved e) {
      if (restoring == e.generation()) {
        int width = spec.rowWidth();
        for (int k = 0; k < e.ids().length; k++) table.restoreRow(e.ids()[k], e.data(), k * width, e.touched()[k]);
      }
    } else if (event instanceof SketchSaved e) {
      if (restoring == e.generation()) table.sketch().restore(e.offset(), e.counters());
    } else if (event instanceof SnapshotCompleted e) {
      if (generation == e.generation()) completedSequenceNr = sequenceNr;
      if (restoring == e.generation()) {
        if (table.store().size() != e.rows()) {
          throw new IllegalStateException("snapshot " + e.generation() + " of shard " + spec.entityId(shard)
              + " holds " + e.rows() + " rows, its events restored " + table.store().size());
        }
        restoring = -1;
      }
    }
    return this;
  }

  private void applyRows(long[] ids, float[] grads, int[] sightings, long step) {
    int dim = spec.dim();
    for (int k = 0; k < ids.length; k++) {
      switch (table.apply(ids[k], grads, k * dim, sightings == null ? 1 : sightings[k], step)) {
        case CREATED -> rowsCreated++;
        case NOT_ADMITTED -> rowsNotAdmitted++;
        case UPDATED -> { }
      }
    }
  }

  /** Everything but rows and admission counters, for the snapshot store. */
  ShardHeader header() {
    return new ShardHeader(spec, shard, version, epoch, members, lastSteps, examplesApplied, rowsCreated,
        rowsNotAdmitted, rowsExpired, generation, sequenceNr);
  }

  /** A state from snapshot {@code h}'s header, waiting for the snapshot's rows. */
  static ShardState fromHeader(ShardHeader h) {
    ShardState s = new ShardState();
    s.spec = h.spec();
    s.shard = h.shard();
    s.table = h.spec() == null ? null : h.spec().newTable();
    s.version = h.version();
    s.epoch = h.epoch();
    s.members = h.members();
    s.lastSteps.putAll(h.lastSteps());
    s.examplesApplied = h.examplesApplied();
    s.rowsCreated = h.rowsCreated();
    s.rowsNotAdmitted = h.rowsNotAdmitted();
    s.rowsExpired = h.rowsExpired();
    s.generation = h.generation();
    s.sequenceNr = h.sequenceNr();
    s.restoring = h.spec() == null ? -1 : h.generation();
    return s;
  }

  // --- the pending sync step (in memory only)

  void addPending(Contribution c) {
    pending.add(c);
  }

  /**
   * The pending step's contributions in trainer-id order, the order its sum adds them in: a push
   * carrying a row twice makes the sum's last bits depend on the order, and a step's update must
   * not depend on which push the network delivered first.
   */
  List<Contribution> byTrainer() {
    List<Contribution> out = new ArrayList<>(pending);
    out.sort(Comparator.comparing(Contribution::trainerId));
    return out;
  }

  boolean hasContributed(String trainerId) {
    for (Contribution c : pending) {
      if (c.trainerId().equals(trainerId)) return true;
    }
    return false;
  }

  /** Trainers of the membership that have not contributed to the pending step. */
  List<String> missing() {
    List<String> out = new ArrayList<>();
    for (String m : members) {
      if (!hasContributed(m)) out.add(m);
    }
    return Collections.unmodifiableList(out);
  }

  /** Whether the pending step is complete under membership {@code epochInForce} of {@code memberSet}. */
  boolean completeUnder(long epochInForce, List<String> memberSet) {
    if (epochInForce <= 0 || pending.isEmpty()) return false;
    for (String m : memberSet) {
      if (!hasContributed(m)) return false;
    }
    return true;
  }
}
