package io.shardtrain.compute.optim;

/**
 * The learning rate as a function of how many updates a block has already had (0 before the
 * first), so every parameter block, even in async training, decays on its own count.
 *
 * <p>Spec strings for {@link #parse}: {@value #ACCEPTED_FORMS}.
 */
@FunctionalInterface
public interface LearningRateSchedule {

  /** The forms {@link #parse} accepts. */
  String ACCEPTED_FORMS = "constant | step:<stepSize>:<gamma> | exp:<gamma> | cosine:<totalUpdates>[:<minLr>]"
      + " | warmup:<warmupUpdates>[,<schedule>]";

  /** The rate for the update that follows {@code update} updates already applied. */
  float rate(long update);

  /** {@code lr} for every update. */
  static LearningRateSchedule constant(float lr) {
    checkRate("lr", lr);
    return update -> lr;
  }

  /** {@code lr * gamma^floor(update / stepSize)}. */
  static LearningRateSchedule step(float lr, long stepSize, float gamma) {
    checkRate("lr", lr);
    if (stepSize <= 0) {
      throw new IllegalArgumentException("step size must be > 0, not " + stepSize);
    }
    Checks.positive("gamma", gamma);
    return update -> (float) (lr * Math.pow(gamma, update / stepSize));
  }

  /** {@code lr * gamma^update}: decay by {@code gamma} every update. */
  static LearningRateSchedule exponential(float lr, float gamma) {
    checkRate("lr", lr);
    Checks.positive("gamma", gamma);
    return update -> (float) (lr * Math.pow(gamma, update));
  }

  /**
   * Cosine annealing from {@code lr} to {@code minLr}:
   * {@code minLr + (lr - minLr) * (1 + cos(pi * update / totalUpdates)) / 2} while
   * {@code update < totalUpdates}, {@code minLr} after.
   */
  static LearningRateSchedule cosine(float lr, long totalUpdates, float minLr) {
    checkRate("lr", lr);
    checkRate("minLr", minLr);
    if (minLr > lr) {
      throw new IllegalArgumentException("cosine minLr " + minLr + " is above the base rate " + lr
          + ": the schedule would raise the rate, not anneal it");
    }
    if (totalUpdates <= 0) {
      throw new IllegalArgumentException("cosine total updates must be > 0, not " + totalUpdates);
    }
    return update -> {
      if (update >= totalUpdates) return minLr;
      double cos = Math.cos(Math.PI * update / totalUpdates);
      return (float) (minLr + (lr - (double) minLr) * (1 + cos) / 2);
    };
  }

  /**
   * Linear warmup in front of {@code after}: {@code after.rate(u) * (u + 1) / warmupUpdates} for
   * {@code u < warmupUpdates}, then {@code after.rate(u)} unchanged (not shifted by the warmup).
   * The first update thus gets {@code 1/warmupUpdates} of the rate, update {@code warmupUpdates-1}
   * the full rate.
   */
  static LearningRateSchedule warmup(LearningRateSchedule after, long warmupUpdates) {
    if (after == null) {
      throw new IllegalArgumentException("the schedule after warmup must not be null");
    }
    if (warmupUpdates <= 0) {
      throw new IllegalArgumentException("warmup updates must be > 0, not " + warmupUpdates);
    }
    return update -> update < warmupUpdates
        ? (float) ((double) after.rate(update) * (update + 1) / warmupUpdates)
        : after.rate(update);
  }

  /**
   * A schedule from a spec with base rate {@code lr}: {@value #ACCEPTED_FORMS}, e.g.
   * {@code "step:1000:0.5"} or {@code "warmup:500,cosine:10000"}. {@code warmup:N} alone warms up
   * to a constant rate.
   */
  /**
   * Where a schedule stands after {@code examplesApplied} examples, counted in the planned updates of
   * {@code examplesPerUpdate} examples each, so a short last batch moves it by what it held; the
   * update count {@code updates} when none were planned. Sync blocks and all-reduce replicas agree
   * on it, so both modes follow one schedule.
   */
  static long position(long examplesApplied, long examplesPerUpdate, long updates) {
    return examplesPerUpdate > 0 ? examplesApplied / examplesPerUpdate : updates;
  }

  static LearningRateSchedule parse(String spec, float lr) {
    if (spec == null) {
      throw new IllegalArgumentException("learning-rate schedule spec is null; accepted forms: " + ACCEPTED_FORMS);
    }
    try {
      return parseTrimmed(spec.trim(), lr);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("bad learning-rate schedule '" + spec + "': " + e.getMessage()
          + "; accepted forms: " + ACCEPTED_FORMS, e);
    }
  }

  private static LearningRateSchedule parseTrimmed(String spec, float lr) {
    if (spec.startsWith("warmup:")) {
      int comma = spec.indexOf(',');
      String count = comma < 0 ? spec.substring(7) : spec.substring(7, comma);
      LearningRateSchedule after = comma < 0 ? constant(lr) : parseTrimmed(spec.substring(comma + 1).trim(), lr);
      return warmup(after, parseLong("warmup updates", count));
    }
    String[] parts = spec.split(":", -1);
    switch (parts[0]) {
      case "constant":
        arity(parts, 1, 1);
        return constant(lr);
      case "step":
        arity(parts, 3, 3);
        return step(lr, parseLong("step size", parts[1]), parseFloat("gamma", parts[2]));
      case "exp":
        arity(parts, 2, 2);
        return exponential(lr, parseFloat("gamma", parts[1]));
      case "cosine":
        arity(parts, 2, 3);
        return cosine(lr, parseLong("total updates", parts[1]),
            parts.length == 3 ? parseFloat("minLr", parts[2]) : 0f);
      default:
        throw new IllegalArgumentException("unknown schedule '" + parts[0] + "'");
    }
  }

  private static void arity(String[] parts, int min, int max) {
    if (parts.length < min || parts.length > max) {
      throw new IllegalArgumentException("'" + parts[0] + "' takes " + (min - 1)
          + (max > min ? " to " + (max - 1) : "") + " argument(s), got " + (parts.length - 1));
    }
  }

  private static long parseLong(String what, String text) {
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " '" + text + "' is not an integer");
    }
  }

  private static float parseFloat(String what, String text) {
    try {
      return Float.parseFloat(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + " '" + text + "' is not a number");
    }
  }

  private static void checkRate(String what, float rate) {
    Checks.nonNegative(what, rate);
  }
}
