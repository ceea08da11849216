package io.shardtrain.actors.trainer;

import io.shardtrain.compute.data.Batch;
import java.util.List;

/**
 * The next step's forward, run while this step's pull round is still arriving: each layer as soon
 * as its blocks are in ({@link LayerReadiness}), on the next batch, read before the first layer
 * runs. It keeps how long it ran while this step's pushes were still unacknowledged and after, so
 * the step's profile counts that time as compute instead of waiting.
 */
final class ForwardAhead {
  private final LayerReadiness readiness;
  /** The next step's batch; null until the first layer ran. */
  private Batch batch;
  private long inPushWait;
  private long inPullWait;
  private long cpu;

  ForwardAhead(LayerReadiness readiness) {
    this.readiness = readiness;
  }

  /** {@code block}'s values of this round are in the model. */
  void arrived(String block) {
    readiness.arrived(block);
  }

  /** The layers to run now, in order; counted as run. */
  List<Integer> takeRunnable() {
    return readiness.takeRunnable();
  }

  /** The next step's forward has begun on {@code batch}. */
  void begun(Batch batch) {
    this.batch = batch;
  }

  boolean begun() {
    return batch != null;
  }

  /** The batch the next step's forward began on; null when it has not. */
  Batch batch() {
    return batch;
  }

  /** How many layers of the next step's forward ran. */
  int layersRun() {
    return readiness.ran();
  }

  /**
   * Layers ran for {@code nanos}, {@code cpuNanos} of it on a core; {@code pushesOut}: while one of
   * this step's pushes was still unacknowledged.
   */
  void ran(long nanos, long cpuNanos, boolean pushesOut) {
    if (pushesOut) {
      inPushWait += nanos;
    } else {
      inPullWait += nanos;
    }
    cpu += cpuNanos;
  }

  long inPushWait() {
    return inPushWait;
  }

  long inPullWait() {
    return inPullWait;
  }

  long cpuNanos() {
    return cpu;
  }
}
