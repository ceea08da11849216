package io.shardtrain.compute.nn;

import java.util.Locale;

/** How an {@link Mlp}'s layers start. */
public enum Initialization {
  /**
   * Hidden layers He-uniform before ReLU, Glorot-uniform before tanh and sigmoid, the output layer
   * Glorot-uniform; biases zero.
   */
  AUTO,
  /**
   * As PyTorch's {@code nn.Linear} starts each layer: weights and biases
   * {@code U(-1/sqrt(in), 1/sqrt(in))}, so a model compared with a PyTorch one starts alike.
   */
  PYTORCH;

  /** The initialization named {@code name} (auto or pytorch, in any case). */
  public static Initialization parse(String name) {
    for (Initialization i : values()) {
      if (i.name().equalsIgnoreCase(name)) return i;
    }
    throw new IllegalArgumentException("unknown init '" + name + "': expected auto or pytorch");
  }

  /** The name {@link #parse} reads: {@code auto} or {@code pytorch}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
