package io.shardtrain.actors.ps;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Locale;

/**
 * The parameter server's settings, read once from {@code shardtrain.ps}: the block size of the
 * layout, how often a block snapshots, how long a pull may wait, when a waiting sync barrier is
 * reported, what to do with a non-finite gradient, the default async staleness bound, how many
 * {@code ps} nodes must have joined sharding before a job's blocks are placed, what a block
 * journals ({@link Durability}), and how long a block no trainer takes part in stays in memory
 * unasked ({@code idlePassivation}; zero: for good).
 */
public record PsSettings(
    int blockSize,
    int snapshotEvery,
    Duration pullTimeout,
    Duration barrierWarnAfter,
    NonFinitePolicy nonFinite,
    long maxStaleness,
    int minNodes,
    Durability durability,
    Duration idlePassivation) {

  /** The reference {@code idle-passivation}. */
  static final Duration IDLE_PASSIVATION = Duration.ofMinutes(2);

  /** What a block journals, and so what survives a crash of its node. */
  public enum Durability {
    /** Every gradient is an event: a block recovers exactly the state it had. */
    EXACT,
    /**
     * Only globally consistent checkpoints are events: on a failure the whole job rolls back to
     * the last one (sync mode only).
     */
    CHECKPOINT
  }

  /** Exact durability, blocks placed once one ps node joined. */
  public PsSettings(int blockSize, int snapshotEvery, Duration pullTimeout, Duration barrierWarnAfter,
      NonFinitePolicy nonFinite, long maxStaleness) {
    this(blockSize, snapshotEvery, pullTimeout, barrierWarnAfter, nonFinite, maxStaleness, 1, Durability.EXACT,
        IDLE_PASSIVATION);
  }

  /** Exact durability. */
  public PsSettings(int blockSize, int snapshotEvery, Duration pullTimeout, Duration barrierWarnAfter,
      NonFinitePolicy nonFinite, long maxStaleness, int minNodes) {
    this(blockSize, snapshotEvery, pullTimeout, barrierWarnAfter, nonFinite, maxStaleness, minNodes, Durability.EXACT,
        IDLE_PASSIVATION);
  }

  /** What a block does with a gradient holding NaN or an infinity. */
  public enum NonFinitePolicy {
    /** Answer with an error; the trainer sees it. */
    REJECT,
    /** Acknowledge with {@code Skipped}, apply nothing, count it. */
    SKIP
  }

  public PsSettings {
    if (blockSize < 1) throw new IllegalArgumentException("shardtrain.ps.block-size must be >= 1, not " + blockSize);
    if (snapshotEvery < 1) {
      throw new IllegalArgumentException("shardtrain.ps.snapshot-every must be >= 1, not " + snapshotEvery);
    }
    positive("shardtrain.ps.pull-timeout", pullTimeout);
    positive("shardtrain.ps.barrier-warn-after", barrierWarnAfter);
    if (nonFinite == null) throw new IllegalArgumentException("shardtrain.ps.non-finite must not be null");
    if (maxStaleness < -1) {
      throw new IllegalArgumentException("shardtrain.ps.max-staleness must be -1 (off) or >= 0, not " + maxStaleness);
    }
    if (minNodes < 1) throw new IllegalArgumentException("shardtrain.ps.min-nodes must be >= 1, not " + minNodes);
    if (durability == null) throw new IllegalArgumentException("shardtrain.ps.durability must not be null");
    if (idlePassivation == null || idlePassivation.isNegative()) {
      throw new IllegalArgumentException("shardtrain.ps.idle-passivation must be 0 (off) or a positive duration, not "
          + idlePassivation);
    }
  }

  /** This setting with another durability. */
  public PsSettings withDurability(Durability d) {
    return new PsSettings(blockSize, snapshotEvery, pullTimeout, barrierWarnAfter, nonFinite, maxStaleness, minNodes, d,
        idlePassivation);
  }

  /** This setting with another idle passivation. */
  public PsSettings withIdlePassivation(Duration after) {
    return new PsSettings(blockSize, snapshotEvery, pullTimeout, barrierWarnAfter, nonFinite, maxStaleness, minNodes,
        durability, after);
  }

  public boolean checkpointDurability() {
    return durability == Durability.CHECKPOINT;
  }

  /**
   * The most bytes of events the journal holds for blocks of {@code floats} floats in all: under
   * exact durability each event carries a whole block (a step's update, a push, a replica's
   * values) and a block deletes the events behind the older of its two snapshots, so at most
   * {@code 2 x snapshot-every} of them; under checkpoint durability none between checkpoints.
   */
  public long heldEventBytes(long floats) {
    return checkpointDurability() ? 0 : 2L * snapshotEvery * floats * Float.BYTES;
  }

  /** The settings of {@code system}'s configuration. */
  public static PsSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  /** The settings under {@code shardtrain.ps} of {@code config}. */
  public static PsSettings fromConfig(Config config) {
    Config ps = config.getConfig("shardtrain.ps");
    String nonFinite = ps.getString("non-finite").trim().toLowerCase(Locale.ROOT);
    NonFinitePolicy policy = switch (nonFinite) {
      case "reject" -> NonFinitePolicy.REJECT;
      case "skip" -> NonFinitePolicy.SKIP;
      default -> throw new IllegalArgumentException(
          "shardtrain.ps.non-finite must be reject or skip, not '" + ps.getString("non-finite") + "'");
    };
    String d = ps.getString("durability").trim().toLowerCase(Locale.ROOT);
    Durability durability = switch (d) {
      case "exact" -> Durability.EXACT;
      case "checkpoint" -> Durability.CHECKPOINT;
      default -> throw new IllegalArgumentException(
          "shardtrain.ps.durability must be exact or checkpoint, not '" + ps.getString("durability") + "'");
    };
    return new PsSettings(
        ps.getInt("block-size"),
        ps.getInt("snapshot-every"),
        ps.getDuration("pull-timeout"),
        ps.getDuration("barrier-warn-after"),
        policy,
        ps.getLong("max-staleness"),
        ps.getInt("min-nodes"),
        durability,
        ps.getDuration("idle-passivation"));
  }

  private static void positive(String key, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(key + " must be a positive duration, not " + d);
    }
  }
}
