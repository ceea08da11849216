package io.shardtrain.actors.ps;

/** A named parameter and how many floats it holds (the product of its shape), as the layout sees it. */
public record ParamShape(String name, int size) {
  public ParamShape {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("parameter name must not be blank");
    }
    if (size < 1) {
      throw new IllegalArgumentException("parameter '" + name + "' must have at least 1 value, not " + size);
    }
  }
}
