package io.shardtrain.compute;

import java.util.Arrays;

/**
 * A dense float tensor in row-major order over a plain {@code float[]}.
 *
 * <p>Rank 1 and rank 2 cover everything the models here need: a matrix is {@code [rows, cols]},
 * a vector is {@code [n]}. The array is exposed on purpose: kernels, optimizers and serializers
 * work on it directly, and copying it would cost more than the math.
 */
public final class Tensor {
  private final int[] shape;
  private final float[] data;

  private Tensor(float[] data, int[] shape) {
    this.shape = shape;
    this.data = data;
  }

  /** A new tensor of zeros. */
  public static Tensor zeros(int... shape) {
    int[] s = checkShape(shape);
    return new Tensor(new float[Math.toIntExact(count(s))], s);
  }

  /** Wraps an existing array (no copy); its length must equal the product of the shape. */
  public static Tensor wrap(float[] data, int... shape) {
    int[] s = checkShape(shape);
    if (data.length != count(s)) {
      throw new IllegalArgumentException(
          "data of length " + data.length + " does not fit shape " + shapeString(s));
    }
    return new Tensor(data, s);
  }

  /** A copy of {@code values} as a tensor. */
  public static Tensor of(float[] values, int... shape) {
    return wrap(values.clone(), shape);
  }

  private static int[] checkShape(int[] shape) {
    if (shape.length == 0 || shape.length > 4) {
      throw new IllegalArgumentException("a tensor has rank 1 to 4, not " + shape.length);
    }
    for (int d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("negative dimension in shape " + shapeString(shape));
      }
    }
    if (count(shape) > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("shape " + shapeString(shape) + " is too large for one array");
    }
    return shape.clone();
  }

  private static long count(int[] shape) {
    return elementCount(shape);
  }

  /**
   * The number of elements of {@code shape} (dimensions not negative), or {@link Long#MAX_VALUE}
   * when it exceeds a long: four dimensions of 65536 multiply to 2^64, which wraps to 0.
   */
  public static long elementCount(int[] shape) {
    for (int d : shape) {
      if (d == 0) return 0;
    }
    long n = 1;
    try {
      for (int d : shape) n = Math.multiplyExact(n, (long) d);
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
    return n;
  }

  public int[] shape() {
    return shape.clone();
  }

  public int rank() {
    return shape.length;
  }

  public int dim(int i) {
    return shape[i];
  }

  /** Number of elements. */
  public int size() {
    return data.length;
  }

  /** The backing array, row-major. */
  public float[] data() {
    return data;
  }

  /** Rows of a matrix; a vector counts as one row. */
  public int rows() {
    return shape.length == 1 ? 1 : shape[0];
  }

  /** Columns of a matrix (the last dimension). */
  public int cols() {
    return shape[shape.length - 1];
  }

  public float get(int i) {
    return data[i];
  }

  public float get(int r, int c) {
    return data[r * cols() + c];
  }

  public void set(int r, int c, float v) {
    data[r * cols() + c] = v;
  }

  public Tensor fill(float v) {
    Arrays.fill(data, v);
    return this;
  }

  public Tensor copy() {
    return new Tensor(data.clone(), shape);
  }

  /** Copies {@code other}'s values into this tensor; the shapes must match. */
  public void copyFrom(Tensor other) {
    Shapes.requireSame("copyFrom", this, other);
    System.arraycopy(other.data, 0, data, 0, data.length);
  }

  /** A view of the same data with another shape of the same size. */
  public Tensor reshape(int... newShape) {
    return wrap(data, newShape);
  }

  public boolean sameShape(Tensor other) {
    return Arrays.equals(shape, other.shape);
  }

  public String shapeString() {
    return shapeString(shape);
  }

  public static String shapeString(int... shape) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < shape.length; i++) {
      if (i > 0) sb.append(", ");
      sb.append(shape[i]);
    }
    return sb.append(']').toString();
  }

  @Override
  public String toString() {
    return "Tensor" + shapeString();
  }
}
