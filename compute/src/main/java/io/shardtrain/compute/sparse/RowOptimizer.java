package io.shardtrain.compute.sparse;

import java.util.Arrays;
import java.util.Locale;

/**
 * The update rule of a sparse table, applied to one row at a time where the row lies: its
 * {@code dim} values, then {@link #slotCount()} slots of {@code dim} floats each, side by side in
 * one array (a {@link RowStore} page). A constant learning rate: rows are updated at their own
 * pace, so a schedule over one shard's updates would mean little.
 *
 * <ul>
 *   <li>{@code SGD}: {@code w -= lr * g}.
 *   <li>{@code ADAGRAD} (as {@link io.shardtrain.compute.optim.AdaGrad}): {@code s += g^2},
 *       {@code w -= lr * g / (sqrt(s) + eps)}; one slot starting at {@code initialAccumulator}.
 *   <li>{@code FTRL} (FTRL-Proximal, McMahan et al. 2013, per coordinate, alpha = lr): slots z
 *       and n; {@code sigma = (sqrt(n + g^2) - sqrt(n)) / lr}, {@code z += g - sigma * w},
 *       {@code n += g^2}, {@code w = |z| <= l1 ? 0 : -(z - sign(z) l1) / ((beta + sqrt(n)) / lr + l2)}.
 *       The first update replaces the row's initial values by this closed form, as FTRL does.
 * </ul>
 */
public record RowOptimizer(Kind kind, float lr, float eps, float initialAccumulator, float l1, float l2,
    float beta) {

  /** The rules there are. */
  public enum Kind { SGD, ADAGRAD, FTRL }

  public RowOptimizer {
    if (kind == null) throw new IllegalArgumentException("row optimizer kind must not be null");
    if (!(lr > 0f) || Float.isInfinite(lr)) throw new IllegalArgumentException("learning rate must be > 0, not " + lr);
    for (float v : new float[] {eps, initialAccumulator, l1, l2, beta}) {
      if (!(v >= 0f) || Float.isInfinite(v)) {
        throw new IllegalArgumentException("row optimizer parameters must be finite and >= 0, got " + this);
      }
    }
  }

  public static RowOptimizer sgd(float lr) {
    return new RowOptimizer(Kind.SGD, lr, 0f, 0f, 0f, 0f, 0f);
  }

  /** AdaGrad with PyTorch's eps 1e-10 and accumulator starting at {@code initialAccumulator}. */
  public static RowOptimizer adagrad(float lr, float initialAccumulator) {
    return new RowOptimizer(Kind.ADAGRAD, lr, 1e-10f, initialAccumulator, 0f, 0f, 0f);
  }

  public static RowOptimizer ftrl(float lr, float l1, float l2, float beta) {
    return new RowOptimizer(Kind.FTRL, lr, 0f, 0f, l1, l2, beta);
  }

  /** {@code sgd}, {@code adagrad} or {@code ftrl}, case-insensitive. */
  public static Kind kind(String name) {
    try {
      return Kind.valueOf(name.trim().toUpperCase(Locale.ROOT));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("row optimizer must be sgd, adagrad or ftrl, not '" + name + "'");
    }
  }

  /** Slots of {@code dim} floats each that follow a row's values. */
  public int slotCount() {
    return switch (kind) {
      case SGD -> 0;
      case ADAGRAD -> 1;
      case FTRL -> 2;
    };
  }

  /** Sets the slots of the row at {@code offset} of {@code data} to their starting values. */
  public void initSlots(float[] data, int offset, int dim) {
    int from = offset + dim;
    int to = offset + dim * (1 + slotCount());
    Arrays.fill(data, from, to, kind == Kind.ADAGRAD ? initialAccumulator : 0f);
  }

  /** One update of the row at {@code offset} of {@code data} by {@code grad[gradOffset, gradOffset + dim)}. */
  public void apply(float[] data, int offset, int dim, float[] grad, int gradOffset) {
    switch (kind) {
      case SGD -> {
        for (int j = 0; j < dim; j++) data[offset + j] -= lr * grad[gradOffset + j];
      }
      case ADAGRAD -> {
        int s = offset + dim;
        for (int j = 0; j < dim; j++) {
          float g = grad[gradOffset + j];
          float acc = data[s + j] + g * g;
          data[s + j] = acc;
          data[offset + j] -= lr * g / ((float) Math.sqrt(acc) + eps);
        }
      }
      case FTRL -> {
        int z = offset + dim;
        int n = offset + 2 * dim;
        for (int j = 0; j < dim; j++) {
          float g = grad[gradOffset + j];
          float nOld = data[n + j];
          float nNew = nOld + g * g;
          float sigma = ((float) Math.sqrt(nNew) - (float) Math.sqrt(nOld)) / lr;
          float zj = data[z + j] + g - sigma * data[offset + j];
          data[z + j] = zj;
          data[n + j] = nNew;
          data[offset + j] = Math.abs(zj) <= l1 ? 0f
              : -(zj - Math.signum(zj) * l1) / ((beta + (float) Math.sqrt(nNew)) / lr + l2);
        }
      }
    }
  }
}
