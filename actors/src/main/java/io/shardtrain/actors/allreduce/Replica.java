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
  private final int slotsPerParameter;
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
    this.slotsPerParameter = states.length == 0 ? 0 : states[0].slots().length;
  }

  /**
   * Applies a step whose mean gradients are in the parameters' gradient arrays, over
   * {@code examples} examples; a step without examples changes nothing.
   */
  public void apply(int examples) {
    if (examples <= 0) return;
    long position = LearningRateSchedule.position(examplesApplied, examplesPerUpdate, updates);
    float rate = schedule.rate(position);
    for (int i = 0; i < states.length; i++) {
      Parameter p = parameters.get(i);
      states[i].step(optimizer, rate, p.value().data(), p.grad().data());
    }
    examplesApplied += examples;
    updates++;
  }

  /**
   * A copy of everything a replica is: per parameter its values, then its optimizer slots, in the
   * parameters' order ({@link #restore} takes it on another member).
   */
  public List<float[]> export() {
    List<float[]> parts = new java.util.ArrayList<>();
    for (int i = 0; i < states.length; i++) {
      parts.add(parameters.get(i).value().data().clone());
      for (float[] slot : states[i].slots()) parts.add(slot.clone());
    }
    return parts;
  }

  /** Parts of an {@link #export}: parameter values and slots per parameter. */
  public int parts() {
    return states.length * (1 + slotsPerParameter);
  }

  /**
   * Becomes the replica another member exported after applying {@code examplesApplied} examples in
   * {@code updates} steps: the same values, slots and schedule position, bit for bit.
   */
  public void restore(List<float[]> parts, long examplesApplied, long updates) {
    if (parts.size() != parts()) {
      throw new IllegalArgumentException("a replica of " + parts() + " parts, not " + parts.size());
    }
    int k = 0;
    for (int i = 0; i < states.length; i++) {
      float[] values = parameters.get(i).value().data();
      float[] from = parts.get(k++);
      if (from.length != values.length) {
        throw new IllegalArgumentException("parameter " + parameters.get(i).name() + " has " + values.length
            + " values, the replica sent " + from.length);
      }
      System.arraycopy(from, 0, values, 0, values.length);
      float[][] slots = new float[slotsPerParameter][];
      for (int j = 0; j < slotsPerParameter; j++) slots[j] = parts.get(k++);
      // Each parameter took every update with examples, so its state counts the replica's updates.
      states[i] = OptimizerState.of(values.length, slots, updates);
    }
    this.examplesApplied = examplesApplied;
    this.updates = updates;
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
