package io.shardtrain.actors.allreduce;

import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerState;
import java.util.List;

/**
 * A trainer's whole copy of the model in all-reduce mode, and the optimizer state that goes with
 * it: each step applies the ring's mean gradients to every parameter in place, once per parameter
 * (every replica holds all of it, so the optimizer sees whole parameters, as in a single process).
 * The schedule runs on the examples applied, counted in planned updates, as a sync parameter
 * block's does; the same means in give the same values out on every replica, bit for bit.
 */
public final class Replica {
  private final List<Parameter> parameters;
  private final Optimizer optimizer;
  private final LearningRateSchedule schedule;
  private final long examplesPerUpdate;
  private final OptimizerState[] states;
  private long examplesApplied;
  private long updates;

  /** Parameters of {@code parameters} as they are now, none of their optimizer state yet. */
  public Replica(List<Parameter> parameters, Optimizer optimizer, LearningRateSchedule schedule,
      long examplesPerUpdate) {
    this.parameters = List.copyOf(parameters);
    this.optimizer = optimizer;
    this.schedule = schedule;
    this.examplesPerUpdate = examplesPerUpdate;
    this.states = new OptimizerState[this.parameters.size()];
    for (int i = 0; i < states.length; i++) {
      states[i] = OptimizerState.create(optimizer, this.parameters.get(i).value().data().length);
    }
  }

  /**
   * Applies a step whose mean gradients are in the parameters' gradient arrays, over
   * {@code examples} examples; a step without examples changes nothing.
   */
  public void apply(int examples) {
    if (examples <= 0) return;
    long position = examplesPerUpdate > 0 ? examplesApplied / examplesPerUpdate : updates;
    float rate = schedule.rate(position);
    for (int i = 0; i < states.length; i++) {
      Parameter p = parameters.get(i);
      states[i].step(optimizer, rate, p.value().data(), p.grad().data());
    }
    examplesApplied += examples;
    updates++;
  }

  /** The examples applied so far, over every step. */
  public long examplesApplied() {
    return examplesApplied;
  }

  /** The steps applied that had examples. */
  public long updates() {
    return updates;
  }
}
