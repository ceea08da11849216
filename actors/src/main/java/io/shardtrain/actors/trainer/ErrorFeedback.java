package io.shardtrain.actors.trainer;

import io.shardtrain.actors.transport.Bf16;
import io.shardtrain.actors.transport.WirePrecision;
import java.util.HashMap;
import java.util.Map;

/**
 * Error feedback for gradients pushed in a lossy wire precision (bf16). Per block it keeps the
 * residual, what rounding left out of the last push, and adds it to that block's next gradient
 * before rounding that, so the sum of what a block was sent over the steps stays within one
 * rounding of the sum of the true gradients instead of drifting by one rounding per step.
 *
 * <p>It rounds in the push's own array: what a retry sends again, what a block in the same JVM
 * gets, and what the wire carries are the same values. A push is compensated once, when it is
 * made, never on a retry. With fp32 there is nothing to do.
 */
final class ErrorFeedback {
  private final WirePrecision precision;
  private final Map<String, float[]> residuals = new HashMap<>();

  ErrorFeedback(WirePrecision precision) {
    this.precision = precision;
  }

  /** Adds {@code block}'s residual to {@code gradient}, rounds it in place, keeps the new residual; returns it. */
  float[] compensate(String block, float[] gradient) {
    if (precision == WirePrecision.FP32) return gradient;
    float[] residual = residuals.get(block);
    if (residual == null || residual.length != gradient.length) {
      residual = new float[gradient.length];
      residuals.put(block, residual);
    }
    for (int i = 0; i < gradient.length; i++) {
      float wanted = gradient[i] + residual[i];
      float sent = Bf16.round(wanted);
      gradient[i] = sent;
      // Exact in fp32: the bits rounding dropped. A non-finite push (the block rejects or skips it)
      // must not poison every push after it.
      float left = wanted - sent;
      residual[i] = Float.isFinite(left) ? left : 0f;
    }
    return gradient;
  }

  /**
   * Forgets every residual, on a rollback: they hold what rounding left out of steps the blocks
   * went back before, and the residual at the checkpoint is not kept. Dropping them loses at most
   * half a bf16 ulp per value, once per rollback.
   */
  void clear() {
    residuals.clear();
  }
}
