package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import java.util.Objects;

/**
 * A named, trainable tensor and its gradient buffer of the same shape.
 *
 * <p>A model's flat list of parameters, in a stable order, is what the parameter server cuts into
 * blocks, so the name ({@code dense1.weight}) must be unique within a model and stable across
 * runs. The layer that owns a parameter overwrites {@link #grad()} on every backward pass; the
 * optimizer updates {@link #value()} in place.
 */
public final class Parameter {
  private final String name;
  private final Tensor value;
  private final Tensor grad;

  /** Wraps {@code value} (no copy) and allocates a zero gradient of the same shape. */
  public Parameter(String name, Tensor value) {
    this.name = Objects.requireNonNull(name, "name");
    if (name.isBlank()) throw new IllegalArgumentException("a parameter needs a name");
    this.value = Objects.requireNonNull(value, "value");
    this.grad = Tensor.zeros(value.shape());
  }

  public String name() {
    return name;
  }

  public Tensor value() {
    return value;
  }

  public Tensor grad() {
    return grad;
  }

  public int[] shape() {
    return value.shape();
  }

  /** Number of scalar values. */
  public int size() {
    return value.size();
  }

  @Override
  public String toString() {
    return name + value.shapeString();
  }
}
