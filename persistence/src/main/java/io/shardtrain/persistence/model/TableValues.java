package io.shardtrain.persistence.model;

import java.util.Arrays;
import java.util.Objects;

/**
 * One sparse table of a saved model: the rows it stores, by id. {@code ids} ascend strictly;
 * {@code values} holds row {@code ids[r]}'s {@code dim} floats at {@code [r * dim, (r + 1) * dim)}.
 * An id a table does not store has its initial values (the model's description says how they are
 * drawn). The arrays are held as given (no copy), as {@link ParameterValues} holds its values.
 */
public record TableValues(String name, int dim, long[] ids, float[] values) {

  public TableValues {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(ids, "ids");
    Objects.requireNonNull(values, "values");
    if (name.isEmpty()) throw new IllegalArgumentException("a model table needs a name");
    if (dim < 1) throw new IllegalArgumentException("table " + name + " has rows of " + dim + " values, expected 1 or more");
    if ((long) ids.length * dim != values.length) {
      throw new IllegalArgumentException("table " + name + " of " + ids.length + " rows of " + dim + " values needs "
          + (long) ids.length * dim + " values, got " + values.length);
    }
    for (int r = 1; r < ids.length; r++) {
      if (ids[r] <= ids[r - 1]) {
        throw new IllegalArgumentException("table " + name + ": ids must ascend strictly; id " + ids[r] + " at row " + r
            + " follows " + ids[r - 1]);
      }
    }
  }

  /** Rows stored. */
  public int rows() {
    return ids.length;
  }

  /** Row {@code id}'s index, or -1 when the table does not store it. */
  public int find(long id) {
    int r = Arrays.binarySearch(ids, id);
    return r >= 0 ? r : -1;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TableValues t && name.equals(t.name) && dim == t.dim && Arrays.equals(ids, t.ids)
        && Arrays.equals(values, t.values);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, dim, Arrays.hashCode(ids), Arrays.hashCode(values));
  }

  @Override
  public String toString() {
    return name + "[" + ids.length + " rows x " + dim + "]";
  }
}
