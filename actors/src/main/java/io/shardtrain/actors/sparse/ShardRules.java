package io.shardtrain.actors.sparse;

import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseEvents.GradientApplied;
import io.shardtrain.actors.sparse.SparseEvents.RowsExpired;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotCompleted;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.actors.sparse.SparseProtocol.Duplicate;
import io.shardtrain.actors.sparse.SparseProtocol.InitShard;
import io.shardtrain.actors.sparse.SparseProtocol.Problem;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.Refused;
import io.shardtrain.actors.sparse.SparseProtocol.Stale;
import io.shardtrain.compute.NumericChecks;
import io.shardtrain.compute.sparse.CountMinSketch;
import io.shardtrain.compute.sparse.RowGradientSum;
import io.shardtrain.compute.sparse.RowStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongFunction;

/**
 * What a command may do to a sparse shard, decided from its state alone: the refusals (a
 * {@link Refused} naming the problem; nothing applied), what a push does, and the events of a
 * step, an expiry or a snapshot, each cut so no event exceeds the settings' byte limit. The
 * shard's actor carries the decisions out.
 */
final class ShardRules {

  /** What a push does: refused, answered at once with {@code reply} of the version, or it {@code takesPart}. */
  record PushOutcome(Refused refused, LongFunction<PushReply> reply, boolean takesPart) {
    static PushOutcome refused(Problem p, String message) {
      return new PushOutcome(new Refused(p, message), null, false);
    }
  }

  private final String entityId;
  private final SparseSettings settings;

  ShardRules(String entityId, SparseSettings settings) {
    this.entityId = entityId;
    this.settings = settings;
  }

  /** Why {@code cmd} may not make this entity its shard, or null. */
  Refused initRefusal(ShardState state, InitShard cmd) {
    if (cmd.spec() == null) return new Refused(Problem.MALFORMED, "InitShard of " + entityId + " has no spec");
    if (cmd.shard() < 0 || cmd.shard() >= cmd.spec().shards() || !cmd.spec().entityId(cmd.shard()).equals(entityId)) {
      return new Refused(Problem.SPEC_MISMATCH, "InitShard for shard " + cmd.shard() + " of table " + cmd.spec().name()
          + " (" + cmd.spec().shards() + " shards) was sent to " + entityId);
    }
    if (state.isInitialised() && !state.spec.equals(cmd.spec())) {
      return new Refused(Problem.SPEC_MISMATCH, "shard " + entityId + " holds " + state.spec + "; refusing " + cmd.spec());
    }
    return null;
  }

  /** Why the ids of a request ({@code what}) do not all belong to this shard, or null. */
  Refused idsRefusal(ShardState state, long[] ids, String what) {
    if (!state.isInitialised()) return new Refused(Problem.NOT_INITIALISED, "shard " + entityId + " is not initialised; "
        + what + " refused");
    if (ids == null) return new Refused(Problem.MALFORMED, what + " to shard " + entityId + " has no ids");
    TableSpec spec = state.spec;
    for (int k = 0; k < ids.length; k++) {
      long id = ids[k];
      if (id < 0 || id >= spec.rows()) {
        return new Refused(Problem.ID_OUTSIDE_TABLE, what + ": row id " + id + " at position " + k + " is outside table "
            + spec.name() + " [0, " + spec.rows() + ")");
      }
      if (spec.shardOf(id) != state.shard) {
        return new Refused(Problem.WRONG_SHARD, what + ": row id " + id + " at position " + k + " belongs to shard "
            + spec.shardOf(id) + " of table " + spec.name() + ", not " + state.shard);
      }
    }
    return null;
  }

  /** Why a {@link SparseProtocol.LoadRows} is refused, or null: ids of this shard, dim values each, finite, before any step. */
  Refused loadRefusal(ShardState state, SparseProtocol.LoadRows cmd) {
    String what = "load of " + (cmd.ids() == null ? 0 : cmd.ids().length) + " rows";
    Refused bad = idsRefusal(state, cmd.ids(), what);
    if (bad != null) return bad;
    if (state.version > 0) {
      return new Refused(Problem.MALFORMED, what + " to shard " + entityId + ": rows load before a table trains, and this"
          + " one is at version " + state.version);
    }
    int dim = state.spec.dim();
    if (cmd.values() == null || cmd.values().length != (long) cmd.ids().length * dim) {
      return new Refused(Problem.WRONG_DIM, what + " to shard " + entityId + ": rows of dim " + dim + " need "
          + (long) cmd.ids().length * dim + " floats, got " + (cmd.values() == null ? "none" : cmd.values().length));
    }
    int nonFinite = NumericChecks.firstNonFinite(cmd.values());
    if (nonFinite >= 0) {
      return new Refused(Problem.NON_FINITE, what + " to shard " + entityId + ": row " + cmd.ids()[nonFinite / dim]
          + " has the non-finite value " + cmd.values()[nonFinite] + " at column " + nonFinite % dim);
    }
    return null;
  }

  /** A load's rows as events under the byte limit. */
  List<Event> load(ShardState state, SparseProtocol.LoadRows cmd) {
    int dim = state.spec.dim();
    int per = settings.rowsPerEvent(8 + 4 * dim);
    long[] ids = cmd.ids();
    List<Event> events = new ArrayList<>();
    for (int from = 0; from < ids.length; from += per) {
      int to = Math.min(ids.length, from + per);
      events.add(new SparseEvents.RowsLoaded(Arrays.copyOfRange(ids, from, to),
          Arrays.copyOfRange(cmd.values(), from * dim, to * dim)));
    }
    return events;
  }

  PushOutcome push(ShardState state, PushRows cmd) {
    String what = "push of trainer " + cmd.trainerId() + " for step " + cmd.step();
    Refused bad = idsRefusal(state, cmd.ids(), what);
    if (bad != null) return new PushOutcome(bad, null, false);
    if (cmd.trainerId() == null || cmd.trainerId().isBlank() || cmd.step() < 1) {
      return PushOutcome.refused(Problem.MALFORMED, what + " to shard " + entityId + ": needs a trainer id and a step >= 1");
    }
    if (!(cmd.weight() >= 0f) || Float.isInfinite(cmd.weight()) || (cmd.weight() == 0f && cmd.ids().length > 0)) {
      return PushOutcome.refused(Problem.MALFORMED, what + " to shard " + entityId + ": weight " + cmd.weight()
          + " (rows need a finite weight > 0; an empty push may weigh 0)");
    }
    int dim = state.spec.dim();
    if (cmd.grads() == null || cmd.grads().length != (long) cmd.ids().length * dim) {
      return PushOutcome.refused(Problem.WRONG_DIM, what + " to shard " + entityId + ": " + cmd.ids().length + " rows of dim "
          + dim + " need " + (long) cmd.ids().length * dim + " floats, got " + (cmd.grads() == null ? "none" : cmd.grads().length));
    }
    int nonFinite = NumericChecks.firstNonFinite(cmd.grads());
    if (nonFinite >= 0) {
      return PushOutcome.refused(Problem.NON_FINITE, what + " to shard " + entityId + ": row " + cmd.ids()[nonFinite / dim]
          + " has the non-finite gradient value " + cmd.grads()[nonFinite] + " at column " + nonFinite % dim);
    }
    long v = state.version;
    if (state.isSync()) {
      if (cmd.step() <= v || (cmd.step() == v + 1 && state.hasContributed(cmd.trainerId()))) {
        return new PushOutcome(null, Duplicate::new, false);
      }
      if (cmd.step() > v + 1) {
        return PushOutcome.refused(Problem.AHEAD, what + " is ahead of shard " + entityId + " at version " + v);
      }
      return new PushOutcome(null, null, true);
    }
    Long last = state.lastSteps.get(cmd.trainerId());
    if (last != null && cmd.step() <= last) return new PushOutcome(null, Duplicate::new, false);
    if (cmd.baseVersion() < 0 || cmd.baseVersion() > v) {
      return PushOutcome.refused(Problem.AHEAD, what + ": base version " + cmd.baseVersion() + " is not one shard "
          + entityId + " has had (it is at " + v + ")");
    }
    long bound = state.spec.maxStaleness();
    if (bound >= 0 && v - cmd.baseVersion() > bound) return new PushOutcome(null, Stale::new, false);
    return new PushOutcome(null, null, true);
  }

  /** The events of the pending sync step, complete: its update in parts, then the rows it leaves expired. */
  List<Event> commit(ShardState state) {
    long carried = 0;
    for (ShardState.Contribution c : state.pending) carried += c.ids().length;
    // Sized for the rows the pushes carry (beyond a million it grows as it goes).
    RowGradientSum sum = new RowGradientSum(state.spec.dim(), (int) Math.min(carried, 1 << 20));
    long examples = 0;
    List<String> contributors = new ArrayList<>();
    for (ShardState.Contribution c : state.byTrainer()) {
      sum.add(c.weight(), c.ids(), c.grads());
      examples += Math.round(c.weight());
      contributors.add(c.trainerId());
    }
    long step = state.version + 1;
    long[] ids = sum.ids();
    float[] mean = sum.mean();
    int[] sightings = sum.sightings();
    int dim = state.spec.dim();
    int per = settings.rowsPerEvent(12 + 4 * dim);
    int parts = Math.max(1, (ids.length + per - 1) / per);
    List<Event> events = new ArrayList<>(parts + 1);
    for (int p = 0; p < parts; p++) {
      int from = p * per;
      int to = Math.min(ids.length, from + per);
      // One part (the usual step) takes the arrays as they are.
      events.add(parts == 1 ? new StepCommitted(step, 0, 1, ids, mean, sightings, examples, contributors)
          : new StepCommitted(step, p, parts, Arrays.copyOfRange(ids, from, to),
              Arrays.copyOfRange(mean, from * dim, to * dim), Arrays.copyOfRange(sightings, from, to), examples,
              contributors));
    }
    events.addAll(expiry(state, step, ids));
    return events;
  }

  /** The events of an async push: its rows (duplicates summed) in parts, then the rows it leaves expired. */
  List<Event> applyAsync(ShardState state, PushRows cmd) {
    RowGradientSum merged = new RowGradientSum(state.spec.dim(), Math.min(cmd.ids().length, 1 << 20));
    merged.add(1f, cmd.ids(), cmd.grads());
    long[] ids = merged.ids();
    float[] grads = merged.mean();
    int dim = state.spec.dim();
    int per = settings.rowsPerEvent(8 + 4 * dim);
    int parts = Math.max(1, (ids.length + per - 1) / per);
    List<Event> events = new ArrayList<>(parts + 1);
    for (int p = 0; p < parts; p++) {
      int from = p * per;
      int to = Math.min(ids.length, from + per);
      events.add(new GradientApplied(cmd.trainerId(), cmd.step(), p, parts, cmd.weight(),
          Arrays.copyOfRange(ids, from, to), Arrays.copyOfRange(grads, from * dim, to * dim)));
    }
    events.addAll(expiry(state, state.version + 1, ids));
    return events;
  }

  /** Rows untouched for the table's expiry once version {@code step} touched {@code touchedNow}, as events. */
  private List<Event> expiry(ShardState state, long step, long[] touchedNow) {
    long[] expired = state.table.expiredAt(step);
    if (expired.length == 0) return List.of();
    Set<Long> now = new HashSet<>();
    for (long id : touchedNow) now.add(id);
    long[] gone = Arrays.stream(expired).filter(id -> !now.contains(id)).toArray();
    List<Event> events = new ArrayList<>();
    int per = settings.rowsPerEvent(8);
    for (int from = 0; from < gone.length; from += per) {
      events.add(new RowsExpired(step, Arrays.copyOfRange(gone, from, Math.min(gone.length, from + per))));
    }
    return events;
  }

  /** The rows and admission counters of snapshot {@code generation}, in events of at most the byte limit, then its seal. */
  List<Event> snapshotChunks(ShardState state, long generation) {
    List<Event> events = new ArrayList<>();
    RowStore store = state.table.store();
    int width = store.width();
    int per = settings.rowsPerEvent(16 + 4 * width);
    for (int from = 0; from < store.size(); from += per) {
      int n = Math.min(per, store.size() - from);
      long[] ids = new long[n];
      long[] touched = new long[n];
      float[] data = new float[n * width];
      for (int k = 0; k < n; k++) {
        int row = from + k;
        ids[k] = store.id(row);
        touched[k] = store.touched(row);
        System.arraycopy(store.page(row), store.base(row), data, k * width, width);
      }
      events.add(new RowsSaved(generation, ids, data, touched));
    }
    CountMinSketch sketch = state.table.sketch();
    if (sketch != null) {
      int[] counters = sketch.counters();
      int perSketch = settings.rowsPerEvent(4);
      for (int from = 0; from < counters.length; from += perSketch) {
        events.add(new SketchSaved(generation, from,
            Arrays.copyOfRange(counters, from, Math.min(counters.length, from + perSketch))));
      }
    }
    events.add(new SnapshotCompleted(generation, store.size()));
    return events;
  }
}
