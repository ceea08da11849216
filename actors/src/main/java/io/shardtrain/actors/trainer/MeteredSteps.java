package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorSystem;
import io.shardtrain.actors.metrics.NodeMetrics;
import io.shardtrain.actors.metrics.TrainerMeters;
import java.util.Map;

/**
 * A trainer's listener that also records each step with data (its examples and loss) in the
 * trainer's meters, then hands every call on to the listener it wraps. The step's time split is
 * recorded by {@link TrainerProfile}, which computes it.
 */
final class MeteredSteps implements StepListener {
  private final TrainerMeters meters;
  private final StepListener listener;

  private MeteredSteps(TrainerMeters meters, StepListener listener) {
    this.meters = meters;
    this.listener = listener;
  }

  /** {@code setup} with its listener wrapped so the meters of its trainer on {@code system}'s node see its steps. */
  static Trainer.Setup around(Trainer.Setup setup, ActorSystem<?> system) {
    MeteredSteps metered = new MeteredSteps(meters(system, setup.trainerId()), setup.listener());
    return new Trainer.Setup(setup.trainerId(), setup.master(), setup.train(), setup.test(), setup.backend(),
        setup.settings(), metered);
  }

  /** A click-through trainer's {@code setup}, its listener wrapped the same way. */
  static CtrTrainer.Setup around(CtrTrainer.Setup setup, ActorSystem<?> system) {
    MeteredSteps metered = new MeteredSteps(meters(system, setup.trainerId()), setup.listener());
    return new CtrTrainer.Setup(setup.trainerId(), setup.master(), setup.train(), setup.test(), setup.settings(),
        metered);
  }

  /** The meters of trainer {@code trainerId} on {@code system}'s node. */
  static TrainerMeters meters(ActorSystem<?> system, String trainerId) {
    return NodeMetrics.get(system).trainer(trainerId);
  }

  @Override
  public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
    meters.trained(examples, loss);
    listener.onStep(trainerId, step, loss, examples, computeNanos);
  }

  @Override
  public void onResumed(String trainerId, int epoch, int task, long offset, long step, long version) {
    listener.onResumed(trainerId, epoch, task, offset, step, version);
  }

  @Override
  public void onProfile(String trainerId, StepProfile profile) {
    listener.onProfile(trainerId, profile);
  }

  @Override
  public void onReplica(String trainerId, long step, Map<String, float[]> values) {
    listener.onReplica(trainerId, step, values);
  }

  @Override
  public void onSparseTraffic(String trainerId, double pullBytesPerExample, double pushBytesPerExample) {
    listener.onSparseTraffic(trainerId, pullBytesPerExample, pushBytesPerExample);
  }

  @Override
  public void onFinished(String trainerId, long steps, long pushes, long pulls, long stalePushes) {
    listener.onFinished(trainerId, steps, pushes, pulls, stalePushes);
  }

  @Override
  public void onFailed(String trainerId, String reason) {
    listener.onFailed(trainerId, reason);
  }
}
