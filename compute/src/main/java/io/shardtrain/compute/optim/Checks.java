package io.shardtrain.compute.optim;

/** Argument checks shared by the optimizers, so every one reports a mismatch the same way. */
final class Checks {
  private Checks() {}

  static void block(String optimizer, float[] weights, float[] grad, float[][] slots, int slotCount, long step) {
    if (weights == null || grad == null || slots == null) {
      throw new IllegalArgumentException(optimizer + ": weights, grad and slots must not be null");
    }
    if (weights.length != grad.length) {
      throw new IllegalArgumentException(optimizer + ": weights of length " + weights.length
          + " and grad of length " + grad.length + " differ");
    }
    if (slots.length != slotCount) {
      throw new IllegalArgumentException(optimizer + " needs " + slotCount + " slots, got " + slots.length);
    }
    for (int s = 0; s < slots.length; s++) {
      if (slots[s] == null || slots[s].length != weights.length) {
        throw new IllegalArgumentException(optimizer + ": slot " + s + " of length "
            + (slots[s] == null ? "null" : String.valueOf(slots[s].length))
            + " does not match weights of length " + weights.length);
      }
    }
    if (step < 1) {
      throw new IllegalArgumentException(optimizer + ": step is 1-based, got " + step);
    }
  }

  static void range(String optimizer, int length, int from, int to) {
    if (from < 0 || from > to || to > length) {
      throw new IllegalArgumentException(optimizer + ": values [" + from + ", " + to + ") are not within a block of "
          + length);
    }
  }

  static float nonNegative(String what, float value) {
    if (!(value >= 0f) || Float.isInfinite(value)) {
      throw new IllegalArgumentException(what + " must be finite and >= 0, not " + value);
    }
    return value;
  }

  static float positive(String what, float value) {
    if (!(value > 0f) || Float.isInfinite(value)) {
      throw new IllegalArgumentException(what + " must be finite and > 0, not " + value);
    }
    return value;
  }

  /** For momentum and Adam's betas: a decay factor in [0, 1). */
  static float decay(String what, float value) {
    if (!(value >= 0f && value < 1f)) {
      throw new IllegalArgumentException(what + " must be in [0, 1), not " + value);
    }
    return value;
  }
}
