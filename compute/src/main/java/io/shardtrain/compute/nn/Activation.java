package io.shardtrain.compute.nn;

import io.shardtrain.compute.backend.Backend;

/** The hidden-layer nonlinearities a model can be built with, and the weight init each suits. */
public enum Activation {
  RELU(Dense.Init.HE_UNIFORM),
  TANH(Dense.Init.GLOROT_UNIFORM),
  SIGMOID(Dense.Init.GLOROT_UNIFORM);

  private final Dense.Init init;

  Activation(Dense.Init init) {
    this.init = init;
  }

  /** The activation named {@code name} (relu, tanh or sigmoid, in any case). */
  public static Activation parse(String name) {
    for (Activation a : values()) {
      if (a.name().equalsIgnoreCase(name)) return a;
    }
    throw new IllegalArgumentException("unknown activation '" + name + "': expected relu, tanh or sigmoid");
  }

  /** Init for the weights of a dense layer that feeds this activation. */
  public Dense.Init init() {
    return init;
  }

  public Layer newLayer(Backend backend) {
    switch (this) {
      case RELU:
        return new Relu(backend);
      case TANH:
        return new Tanh(backend);
      case SIGMOID:
        return new Sigmoid(backend);
      default:
        throw new AssertionError(this);
    }
  }
}
