package io.shardtrain.actors.trainer;

import java.util.Map;

/** Receives a trainer's progress in its own process (for progress bars, metrics files, tests). */
public interface StepListener {
  /** A step whose gradients every block acknowledged. */
  void onStep(String trainerId, long step, float loss, int examples, long computeNanos);

  /**
   * The trainer, (re)started, holds task {@code epoch/task} from reader offset {@code offset} and
   * continues after {@code step} on parameters pulled at {@code version}.
   */
  default void onResumed(String trainerId, int epoch, int task, long offset, long step, long version) {}

  /**
   * Where the trainer's time went over the steps it completed; once, as it stops, just before
   * {@link #onFinished}.
   */
  default void onProfile(String trainerId, StepProfile profile) {}

  /**
   * All-reduce mode: the trainer's replica as it leaves the ring, after step {@code step}: each
   * parameter's values by name. The arrays are the trainer's: copy what you keep past the call.
   */
  default void onReplica(String trainerId, long step, Map<String, float[]> values) {}

  /**
   * A click-through trainer's sparse traffic as it stops: payload bytes of its row pulls (ids sent,
   * rows received) and of its row pushes (ids and gradient rows), per example it pushed.
   */
  default void onSparseTraffic(String trainerId, double pullBytesPerExample, double pushBytesPerExample) {}

  /** The trainer stopped: the job is done, its step budget is spent, or it was told to stop. */
  void onFinished(String trainerId, long steps, long pushes, long pulls, long stalePushes);

  /** The trainer gave up: a block refused its gradient for a reason a retry cannot fix. */
  void onFailed(String trainerId, String reason);
}
