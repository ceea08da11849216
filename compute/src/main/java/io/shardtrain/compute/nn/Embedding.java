package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * A lookup table of {@code rows} vectors of width {@code dim}; parameter {@code <name>.table}.
 *
 * <p>Forward gathers the rows named by a batch of ids. Backward writes the table gradient as a
 * dense {@code [rows, dim]} tensor, but keeps it cheap for large tables: it zeroes only the rows
 * the previous backward wrote, then scatter-adds the new batch (repeated ids accumulate). After a
 * backward, every row outside {@link #touchedRows()} is zero, so a trainer may push just those
 * rows. The table starts as {@code N(0, 1/dim)}, giving vectors of roughly unit length.
 */
public final class Embedding {
  private final String name;
  private final int rows;
  private final int dim;
  private final Backend backend;
  private final Parameter table;

  private int[] ids;
  private Tensor output;
  private int[] touched = new int[0];
  private int touchedCount;
  // Rows the last backward wrote into the gradient; the next backward zeroes exactly these.
  private int[] dirty = new int[0];
  private int dirtyCount;

  public Embedding(String name, int rows, int dim, Backend backend, Random initRng) {
    if (rows < 1 || dim < 1) {
      throw new IllegalArgumentException(name + ": embedding sizes must be positive, got rows=" + rows
          + " dim=" + dim);
    }
    this.name = Objects.requireNonNull(name, "name");
    this.rows = rows;
    this.dim = dim;
    this.backend = Objects.requireNonNull(backend, "backend");
    Tensor t = Tensor.zeros(rows, dim);
    double std = 1.0 / Math.sqrt(dim);
    float[] ts = t.data();
    for (int i = 0; i < ts.length; i++) ts[i] = (float) (initRng.nextGaussian() * std);
    this.table = new Parameter(name + ".table", t);
  }

  public String name() {
    return name;
  }

  public int rows() {
    return rows;
  }

  public int dim() {
    return dim;
  }

  public Parameter table() {
    return table;
  }

  public List<Parameter> parameters() {
    return List.of(table);
  }

  /** The rows for {@code ids}, shape {@code [ids.length, dim]}, in a buffer this layer reuses. */
  public Tensor forward(int[] ids) {
    for (int i = 0; i < ids.length; i++) {
      if (ids[i] < 0 || ids[i] >= rows) {
        throw new IllegalArgumentException(name + ": id " + ids[i] + " at position " + i
            + " is outside [0, " + rows + ")");
      }
    }
    int n = ids.length;
    if (this.ids == null || this.ids.length != n) {
      this.ids = new int[n];
      touched = new int[n];
    }
    System.arraycopy(ids, 0, this.ids, 0, n);
    output = Buffers.ensure(output, n, dim);
    backend.gather(table.value(), this.ids, output);

    System.arraycopy(ids, 0, touched, 0, n);
    Arrays.sort(touched, 0, n);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
      if (distinct == 0 || touched[i] != touched[distinct - 1]) touched[distinct++] = touched[i];
    }
    touchedCount = distinct;
    return output;
  }

  /** Writes the table gradient for the last forward's ids: dense, zero outside touched rows. */
  public void backward(Tensor gradOutput) {
    Buffers.requireForward(ids, name);
    if (!gradOutput.sameShape(output)) {
      throw new IllegalArgumentException(name + ".backward: gradient shape " + gradOutput.shapeString()
          + " does not match output shape " + output.shapeString());
    }
    float[] g = table.grad().data();
    for (int i = 0; i < dirtyCount; i++) {
      int off = dirty[i] * dim;
      Arrays.fill(g, off, off + dim, 0f);
    }
    backend.scatterAdd(gradOutput, ids, table.grad());
    if (dirty.length < touchedCount) dirty = new int[touched.length];
    System.arraycopy(touched, 0, dirty, 0, touchedCount);
    dirtyCount = touchedCount;
  }

  /** The distinct ids of the last forward's batch, ascending (a new array). */
  public int[] touchedRows() {
    return Arrays.copyOf(touched, touchedCount);
  }

  @Override
  public String toString() {
    return "Embedding(" + name + ", " + rows + " x " + dim + ")";
  }
}
