package io.shardtrain.actors.ps;

import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.util.Locale;

/**
 * What a parameter block is and how it learns: its slice of the parameter, its optimizer, its
 * learning-rate schedule (a {@link LearningRateSchedule#parse} spec over base rate {@code lr},
 * run on the block's own progress) and its consistency mode. {@code maxStaleness} bounds, in
 * async mode, how many versions a pushed gradient's base may lag the block (-1 = unbounded).
 *
 * <p>{@code examplesPerUpdate} is what one update was planned to cover (batch × trainers in sync,
 * the batch in async): the schedule then runs on the examples the block applied, counted in such
 * updates, so a job whose trainers leave or join still ends its schedule when the planned examples
 * are consumed. 0 runs it on the update count.
 */
public record BlockSpec(
    String parameter,
    int index,
    int offset,
    int length,
    OptimizerSpec optimizer,
    String lrSchedule,
    float lr,
    Mode mode,
    long maxStaleness,
    long examplesPerUpdate) {

  /** How pushes of several trainers combine. */
  public enum Mode {
    /** Every step waits for all trainers of the membership, then applies their weighted mean once. */
    SYNC,
    /** Every push is applied as it arrives. */
    ASYNC,
    /**
     * Trainers average their gradients among themselves (ring all-reduce) and each applies the step
     * to its own replica; the block takes no gradients, it keeps the values replicas publish.
     */
    ALLREDUCE;

    /** The mode named {@code name} (any case); an error naming the modes otherwise. */
    public static Mode parse(String name) {
      try {
        return valueOf(name.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("mode must be sync, async or allreduce, got '" + name + "'");
      }
    }

    /** Whether steps are the job's, every trainer taking each one together (sync and all-reduce). */
    public boolean lockstep() {
      return this != ASYNC;
    }
  }

  public BlockSpec {
    // BlockSlice checks the name, index, offset and length.
    new BlockSlice(parameter, index, offset, length);
    if (optimizer == null) throw new IllegalArgumentException("block " + parameter + "#" + index + ": optimizer must not be null");
    if (mode == null) throw new IllegalArgumentException("block " + parameter + "#" + index + ": mode must not be null");
    if (!(lr >= 0f) || Float.isInfinite(lr)) {
      throw new IllegalArgumentException("block " + parameter + "#" + index + ": lr must be a finite number >= 0, not " + lr);
    }
    if (maxStaleness < -1) {
      throw new IllegalArgumentException("block " + parameter + "#" + index
          + ": max staleness must be -1 (off) or >= 0, not " + maxStaleness);
    }
    if (examplesPerUpdate < 0) {
      throw new IllegalArgumentException("block " + parameter + "#" + index
          + ": examples per update must be >= 0 (0: the schedule counts updates), not " + examplesPerUpdate);
    }
    // Fails here, naming the spec, rather than in the block after it was persisted.
    LearningRateSchedule.parse(lrSchedule, lr);
  }

  /** A spec whose schedule runs on the update count. */
  public BlockSpec(String parameter, int index, int offset, int length, OptimizerSpec optimizer, String lrSchedule,
      float lr, Mode mode, long maxStaleness) {
    this(parameter, index, offset, length, optimizer, lrSchedule, lr, mode, maxStaleness, 0);
  }

  /** The spec of {@code slice} with the given optimizer, schedule, mode and staleness bound. */
  public static BlockSpec of(BlockSlice slice, OptimizerSpec optimizer, String lrSchedule, float lr, Mode mode,
      long maxStaleness) {
    return of(slice, optimizer, lrSchedule, lr, mode, maxStaleness, 0);
  }

  /** The same, with the schedule running on the examples applied, {@code examplesPerUpdate} to an update. */
  public static BlockSpec of(BlockSlice slice, OptimizerSpec optimizer, String lrSchedule, float lr, Mode mode,
      long maxStaleness, long examplesPerUpdate) {
    return new BlockSpec(slice.parameter(), slice.index(), slice.offset(), slice.length(), optimizer, lrSchedule,
        lr, mode, maxStaleness, examplesPerUpdate);
  }

  /** The spec of {@code slice}, taking the staleness bound from {@code shardtrain.ps.max-staleness}. */
  public static BlockSpec of(BlockSlice slice, OptimizerSpec optimizer, String lrSchedule, float lr, Mode mode,
      PsSettings settings) {
    return of(slice, optimizer, lrSchedule, lr, mode, settings.maxStaleness());
  }

  /** The slice of the parameter this spec describes. */
  public BlockSlice slice() {
    return new BlockSlice(parameter, index, offset, length);
  }

  /** The sharding entity id of this block: {@code parameter#index}. */
  public String entityId() {
    return BlockSlice.entityId(parameter, index);
  }

  /** The schedule this spec names, over its base rate. */
  public LearningRateSchedule schedule() {
    return LearningRateSchedule.parse(lrSchedule, lr);
  }
}
