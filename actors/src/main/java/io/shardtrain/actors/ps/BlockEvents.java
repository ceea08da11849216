package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import java.util.List;

/** What the journal of a {@link ParameterBlock} records. */
public final class BlockEvents {
  private BlockEvents() {}


  /** What the journal records. */
  public sealed interface Event {}

  /** The block got its spec and initial values. */
  public record Initialized(BlockSpec spec, float[] values) implements Event {}

  /**
   * The block got its spec and the state of a checkpoint at {@code step} (a resumed job): values,
   * optimizer slots, update count and examples applied.
   */
  public record Resumed(BlockSpec spec, long step, float[] values, float[][] slots, long updates, long examples)
      implements Event {}

  /**
   * Sync: a trainer's gradient for the pending step, kept until the barrier completes; {@code mark}
   * (nullable) names the examples behind it.
   */
  public record GradientReceived(String trainerId, long step, float weight, float[] values, TaskMark mark)
      implements Event {
    public GradientReceived(String trainerId, long step, float weight, float[] values) {
      this(trainerId, step, weight, values, null);
    }
  }

  /** Sync: a trainer's non-finite gradient for the pending step was skipped; it counts for the barrier. */
  public record GradientSkipped(String trainerId, long step, TaskMark mark) implements Event {
    public GradientSkipped(String trainerId, long step) {
      this(trainerId, step, null);
    }
  }

  /**
   * Sync: the barrier of {@code step} completed and the weighted mean of the contributions received
   * before it was applied. Journals of checkpoint durability, and exact journals of format 6 and
   * older, hold it after one {@link GradientReceived} or {@link GradientSkipped} per trainer.
   */
  public record StepApplied(long step) implements Event {}

  /**
   * Sync, exact durability: the barrier of {@code step} completed and {@code mean}, the weighted mean
   * of its contributions, was applied through the block's update rule; null when no contribution had
   * a positive weight (nothing applied, no update counted). One event per block and step, holding the
   * applied gradient once instead of each trainer's input: replay applies the same floats, so it
   * rebuilds the same values bit for bit. {@code examples} is the sum of the contributions' weights;
   * {@code contributors} name each trainer that took part, with the examples behind its push.
   */
  public record StepCommitted(long step, float[] mean, long examples, List<Contributor> contributors)
      implements Event {
    public StepCommitted {
      contributors = List.copyOf(contributors);
    }
  }

  /** A trainer that took part in a committed step, and how far its task's examples reached (nullable). */
  public record Contributor(String trainerId, TaskMark mark) {}

  /**
   * Async: a trainer's gradient was applied; {@code weight} is the examples behind it (0 in journals
   * of format 6 and older), {@code mark} (nullable) names them.
   */
  public record GradientApplied(String trainerId, long step, float weight, float[] values, TaskMark mark)
      implements Event {
    public GradientApplied(String trainerId, long step, float[] values) {
      this(trainerId, step, 0f, values, null);
    }
  }

  /** The trainers sync steps wait for, from membership {@code epoch} on. */
  public record MembershipUpdated(long epoch, List<String> trainers) implements Event {
    public MembershipUpdated {
      trainers = List.copyOf(trainers);
    }
  }

  /**
   * The block's values, slots, update count and examples applied at version {@code step}, kept as
   * a checkpoint; held checkpoints older than {@code keepFrom} are dropped. In checkpoint durability
   * this is what the journal holds instead of gradients, so replay lands on the newest checkpoint.
   */
  public record CheckpointTaken(long step, long keepFrom, float[] values, float[][] slots, long updates,
      long examples) implements Event {
    public CheckpointTaken(long step, long keepFrom, float[] values, float[][] slots, long updates) {
      this(step, keepFrom, values, slots, updates, 0);
    }
  }

  /**
   * All-reduce: a replica of ring epoch {@code ringEpoch} published its values after step
   * {@code step}, {@code examples} examples applied in all.
   */
  public record ReplicaPublished(long step, long ringEpoch, long examples, float[] values) implements Event {}

  /** Checkpoint durability: the block went back to its checkpoint at {@code step}; pushes of older generations are refused. */
  public record RolledBackTo(long step, long generation) implements Event {}

}
