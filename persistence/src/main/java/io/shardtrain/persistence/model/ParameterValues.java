package io.shardtrain.persistence.model;

import io.shardtrain.compute.Tensor;
import java.util.Arrays;
import java.util.Objects;

/**
 * One named parameter of a saved model: its full shape and its row-major values.
 *
 * <p>The arrays are held as given (no copy), like {@link Tensor#wrap}; equality compares the
 * float bit patterns, so two snapshots are equal only when they are identical bit for bit (a NaN
 * payload or a negative zero counts).
 */
public record ParameterValues(String name, int[] shape, float[] values) {

  public ParameterValues {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(shape, "shape");
    Objects.requireNonNull(values, "values");
    if (name.isEmpty()) throw new IllegalArgumentException("a model parameter needs a name");
    if (shape.length < 1) {
      throw new IllegalArgumentException("parameter " + name + " has rank 0, expected 1 or more");
    }
    for (int d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("parameter " + name + " has negative dimension in shape "
            + Tensor.shapeString(shape));
      }
    }
    long count = Tensor.elementCount(shape);
    if (count != values.length) {
      throw new IllegalArgumentException("parameter " + name + " of shape " + Tensor.shapeString(shape)
          + " needs " + count + " values, got " + values.length);
    }
  }

  /** Number of scalar values. */
  public int size() {
    return values.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ParameterValues p && name.equals(p.name) && Arrays.equals(shape, p.shape)
        && Arrays.equals(values, p.values);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * name.hashCode() + Arrays.hashCode(shape)) + Arrays.hashCode(values);
  }

  @Override
  public String toString() {
    return name + Tensor.shapeString(shape);
  }
}
