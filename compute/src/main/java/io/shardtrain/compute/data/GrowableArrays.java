package io.shardtrain.compute.data;

import java.util.Arrays;

/** Append-only primitive arrays for the text readers, which do not know their row count ahead. */
final class GrowableArrays {
  private GrowableArrays() {}

  static final class Floats {
    private float[] a = new float[1024];
    private int n;

    void add(float v) {
      if (n == a.length) a = Arrays.copyOf(a, grow(a.length));
      a[n++] = v;
    }

    int size() {
      return n;
    }

    float get(int i) {
      return a[i];
    }

    float[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  static final class Ints {
    private int[] a = new int[1024];
    private int n;

    void add(int v) {
      if (n == a.length) a = Arrays.copyOf(a, grow(a.length));
      a[n++] = v;
    }

    int size() {
      return n;
    }

    int get(int i) {
      return a[i];
    }

    int[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  private static int grow(int length) {
    if (length >= Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("too many values for one array");
    }
    return (int) Math.min(Integer.MAX_VALUE - 8L, length * 2L);
  }
}
