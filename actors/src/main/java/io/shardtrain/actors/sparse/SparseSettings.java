package io.shardtrain.actors.sparse;

import akka.actor.typed.ActorSystem;
import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The sparse table shards' settings, read once from {@code shardtrain.sparse}: how many events a
 * shard journals between its snapshots, the most bytes one of its events may take (snapshots and
 * large steps are cut into events of at most this), how long a pull may wait for a version, and
 * the admission sketch a table gets when its spec does not say; and, as for parameter blocks
 * ({@code shardtrain.ps.idle-passivation}), how long a shard no trainer takes part in stays in
 * memory unasked.
 */
public record SparseSettings(int snapshotEvery, int maxEventBytes, Duration pullTimeout, int sketchDepth,
    int sketchWidth, Duration idlePassivation) {

  public SparseSettings(int snapshotEvery, int maxEventBytes, Duration pullTimeout, int sketchDepth, int sketchWidth) {
    this(snapshotEvery, maxEventBytes, pullTimeout, sketchDepth, sketchWidth, Duration.ofMinutes(2));
  }

  /** Bytes of an event besides its rows: format, counts, trainer names. */
  static final int EVENT_OVERHEAD = 4096;

  public SparseSettings {
    if (snapshotEvery < 1) {
      throw new IllegalArgumentException("shardtrain.sparse.snapshot-every must be >= 1, not " + snapshotEvery);
    }
    if (maxEventBytes < 2 * EVENT_OVERHEAD) {
      throw new IllegalArgumentException("shardtrain.sparse.max-event-bytes must be >= " + 2 * EVENT_OVERHEAD
          + ", not " + maxEventBytes);
    }
    if (pullTimeout == null || pullTimeout.isZero() || pullTimeout.isNegative()) {
      throw new IllegalArgumentException("shardtrain.sparse.pull-timeout must be a positive duration, not " + pullTimeout);
    }
    if (sketchDepth < 1 || sketchDepth > 16 || sketchWidth < 1 || Integer.bitCount(sketchWidth) != 1) {
      throw new IllegalArgumentException("shardtrain.sparse.sketch-depth must be 1 to 16 and sketch-width a power of"
          + " two, not " + sketchDepth + " and " + sketchWidth);
    }
    if (idlePassivation == null || idlePassivation.isNegative()) {
      throw new IllegalArgumentException("shardtrain.ps.idle-passivation must be 0 (off) or a positive duration, not "
          + idlePassivation);
    }
  }

  public static SparseSettings create(ActorSystem<?> system) {
    return fromConfig(system.settings().config());
  }

  public static SparseSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.sparse");
    long bytes = c.getBytes("max-event-bytes");
    if (bytes > Integer.MAX_VALUE / 2) {
      throw new IllegalArgumentException("shardtrain.sparse.max-event-bytes must be below 1 GiB, not " + bytes);
    }
    return new SparseSettings(c.getInt("snapshot-every"), (int) bytes, c.getDuration("pull-timeout"),
        c.getInt("sketch-depth"), c.getInt("sketch-width"), config.getDuration("shardtrain.ps.idle-passivation"));
  }

  /** Rows of {@code bytesPerRow} bytes one event may carry. */
  int rowsPerEvent(int bytesPerRow) {
    return Math.max(1, (maxEventBytes - EVENT_OVERHEAD) / bytesPerRow);
  }
}
