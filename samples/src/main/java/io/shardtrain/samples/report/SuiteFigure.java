package io.shardtrain.samples.report;

/**
 * One figure of {@code bench suite}: {@code name} is its key in a baseline, so it stays the same
 * from run to run; {@code higherIsBetter} says which way is a regression; {@code seeded}: the seeds
 * set the value (a test accuracy, the bytes a run sends) up to a little timing, not the machine's
 * speed, so it is held to a tolerance of its own, far below the timed figures' noise.
 */
public record SuiteFigure(String name, double value, String unit, boolean higherIsBetter, boolean seeded) {
  public SuiteFigure {
    if (name == null || name.isBlank()) throw new IllegalArgumentException("a suite figure needs a name");
  }

  /** A timed figure: its value moves with the machine's speed and load. */
  public SuiteFigure(String name, double value, String unit, boolean higherIsBetter) {
    this(name, value, unit, higherIsBetter, false);
  }
}
