package io.shardtrain.tests;

import io.shardtrain.actors.trainer.StepListener;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** What all-reduce trainers show when they leave: each one's replica and last step, and failures. */
class ReplicaRecorder implements StepListener {
  final Map<String, Map<String, float[]>> replicas = new ConcurrentHashMap<>();
  final Map<String, Long> lastSteps = new ConcurrentHashMap<>();
  final Map<String, String> failures = new ConcurrentHashMap<>();
  private final Set<String> awaited;
  private final CountDownLatch finished;

  /** Records every trainer; {@link #await} waits for those of {@code awaited}. */
  ReplicaRecorder(Set<String> awaited) {
    this.awaited = awaited;
    this.finished = new CountDownLatch(awaited.size());
  }

  boolean await(long seconds) throws InterruptedException {
    return finished.await(seconds, TimeUnit.SECONDS);
  }

  @Override
  public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {}

  @Override
  public void onReplica(String trainerId, long step, Map<String, float[]> values) {
    Map<String, float[]> copy = new LinkedHashMap<>();
    values.forEach((name, v) -> copy.put(name, v.clone()));
    replicas.put(trainerId, copy);
    lastSteps.put(trainerId, step);
  }

  @Override
  public void onFinished(String trainerId, long steps, long pushes, long pulls, long stale) {
    if (awaited.contains(trainerId)) finished.countDown();
  }

  @Override
  public void onFailed(String trainerId, String reason) {
    failures.put(trainerId, reason);
    if (awaited.contains(trainerId)) finished.countDown();
  }
}
