package io.shardtrain.samples.report;

/**
 * One figure of {@code bench suite}: {@code name} is its key in a baseline, so it stays the same
 * from run to run; {@code higherIsBetter} says which way is a regression.
 */
public record SuiteFigure(String name, double value, String unit, boolean higherIsBetter) {
  public SuiteFigure {
    if (name == null || name.isBlank()) throw new IllegalArgumentException("a suite figure needs a name");
  }
}
