package io.shardtrain.compute;

/** Shape checks that name both shapes in their message, so a wrong tensor is found at once. */
public final class Shapes {
  private Shapes() {}

  public static void requireSame(String op, Tensor a, Tensor b) {
    if (!a.sameShape(b)) {
      throw new IllegalArgumentException(
          op + ": shape mismatch " + a.shapeString() + " vs " + b.shapeString());
    }
  }

  public static void requireMatrix(String op, Tensor t) {
    if (t.rank() != 2) {
      throw new IllegalArgumentException(op + ": expected a matrix, got shape " + t.shapeString());
    }
  }

  public static void requireRows(String op, Tensor t, int rows) {
    if (t.rows() != rows) {
      throw new IllegalArgumentException(
          op + ": expected " + rows + " rows, got shape " + t.shapeString());
    }
  }

  public static void requireSize(String op, Tensor t, int size) {
    if (t.size() != size) {
      throw new IllegalArgumentException(
          op + ": expected " + size + " elements, got shape " + t.shapeString());
    }
  }

  public static void requireLength(String op, int expected, int actual) {
    if (expected != actual) {
      throw new IllegalArgumentException(op + ": expected length " + expected + ", got " + actual);
    }
  }
}
