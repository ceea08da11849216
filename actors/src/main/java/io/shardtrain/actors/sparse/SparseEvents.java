package io.shardtrain.actors.sparse;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the journal of a {@link SparseShard} records. Events that carry rows are cut into parts so
 * that none exceeds {@code shardtrain.sparse.max-event-bytes}; the parts of one step are written
 * in one atomic write.
 */
public final class SparseEvents {
  private SparseEvents() {}

  /** What the journal records. */
  public sealed interface Event {}

  /** The entity became shard {@code shard} of {@code spec}. */
  public record ShardInitialized(TableSpec spec, int shard) implements Event {}

  /**
   * Sync: part {@code part} of {@code parts} of step {@code step}'s update: row {@code ids[k]}'s
   * mean gradient is {@code mean[k * dim, (k + 1) * dim)}, carried by {@code sightings[k]} pushes.
   * The last part moves the version to {@code step} and adds {@code examples}.
   */
  public record StepCommitted(long step, int part, int parts, long[] ids, float[] mean, int[] sightings, long examples,
      List<String> contributors) implements Event {
    public StepCommitted {
      contributors = List.copyOf(contributors);
    }
  }

  /** Async: part {@code part} of {@code parts} of a trainer's push, applied; the last part moves the version. */
  public record GradientApplied(String trainerId, long step, int part, int parts, float weight, long[] ids,
      float[] grads) implements Event {}

  /** The trainers sync steps wait for, from membership {@code epoch} on. */
  public record MembershipUpdated(long epoch, List<String> trainers) implements Event {
    public MembershipUpdated {
      trainers = List.copyOf(trainers);
    }
  }

  /** At version {@code version}, the rows of {@code ids} had been untouched for the table's expiry: evicted. */
  public record RowsExpired(long version, long[] ids) implements Event {}

  /**
   * Snapshot {@code generation} began at sequence number {@code sequenceNr}: the snapshot store
   * holds the shard's header there ({@link ShardHeader}), and the events that follow it in one
   * write, {@link RowsSaved}, {@link SketchSaved} and {@link SnapshotCompleted}, hold its rows.
   */
  public record SnapshotBegun(long generation, long sequenceNr) implements Event {}

  /** Rows a job started from (values only; their slots start at the optimizer's initial values). */
  public record RowsLoaded(long[] ids, float[] values) implements Event {}

  /** Rows of snapshot {@code generation}: {@code data} holds each row's values and slots, side by side. */
  public record RowsSaved(long generation, long[] ids, float[] data, long[] touched) implements Event {}

  /** Admission counters {@code [offset, offset + counters.length)} of snapshot {@code generation}. */
  public record SketchSaved(long generation, int offset, int[] counters) implements Event {}

  /** Snapshot {@code generation} is whole: {@code rows} rows. */
  public record SnapshotCompleted(long generation, long rows) implements Event {}

  /**
   * What the snapshot store holds for a shard: everything but its rows and admission counters,
   * which follow in the journal (see {@link SnapshotBegun}). {@code generation} is the snapshot,
   * taken at {@code sequenceNr}.
   */
  public record ShardHeader(TableSpec spec, int shard, long version, long epoch, List<String> members,
      Map<String, Long> lastSteps, long examplesApplied, long rowsCreated, long rowsNotAdmitted, long rowsExpired,
      long generation, long sequenceNr) {
    public ShardHeader {
      members = List.copyOf(members);
      lastSteps = java.util.Collections.unmodifiableMap(new TreeMap<>(lastSteps));
    }
  }
}
