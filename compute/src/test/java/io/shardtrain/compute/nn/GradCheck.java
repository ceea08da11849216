package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import java.util.Random;
import java.util.function.DoubleSupplier;

/**
 * Finite-difference gradient checks for float layers.
 *
 * <p>The derivative is a central difference computed in double: the float entry is moved to
 * {@code v + eps} and {@code v - eps}, the scalar loss is evaluated in double from the layer's
 * float outputs, and the difference is divided by the step the float entry really took (not
 * {@code 2 eps}, which float rounding would make slightly wrong). Error measure:
 * {@code |analytic - numeric| / max(|analytic| + |numeric|, floor)}; the floor keeps gradients
 * that are essentially zero from turning float noise into a large relative error.
 */
final class GradCheck {
  private GradCheck() {}

  /** Central difference of {@code loss} with respect to {@code data[i]}; restores the entry. */
  static double numeric(float[] data, int i, double eps, DoubleSupplier loss) {
    float v = data[i];
    float plus = (float) (v + eps);
    float minus = (float) (v - eps);
    data[i] = plus;
    double lp = loss.getAsDouble();
    data[i] = minus;
    double lm = loss.getAsDouble();
    data[i] = v;
    return (lp - lm) / ((double) plus - minus);
  }

  static double relativeError(double analytic, double numeric, double floor) {
    return Math.abs(analytic - numeric) / Math.max(Math.abs(analytic) + Math.abs(numeric), floor);
  }

  /** Checks every entry of {@code analytic} (a copy taken before perturbing) against {@code data}. */
  static double checkAll(String what, float[] data, float[] analytic, double eps, double tol,
      DoubleSupplier loss) {
    double worst = 0;
    for (int i = 0; i < data.length; i++) {
      double n = numeric(data, i, eps, loss);
      double err = relativeError(analytic[i], n, 1e-3);
      worst = Math.max(worst, err);
      int at = i;
      assertTrue(err < tol, () -> what + "[" + at + "]: analytic " + analytic[at] + " numeric " + n
          + " relative error " + err);
    }
    return worst;
  }

  /** {@code sum out[i] * weights[i]} in double: a scalar loss whose gradient is {@code weights}. */
  static double project(Tensor out, Tensor weights) {
    double s = 0;
    for (int i = 0; i < out.size(); i++) s += (double) out.data()[i] * weights.data()[i];
    return s;
  }

  static Tensor random(Random rnd, float scale, int... shape) {
    Tensor t = Tensor.zeros(shape);
    for (int i = 0; i < t.size(); i++) t.data()[i] = (rnd.nextFloat() * 2f - 1f) * scale;
    return t;
  }
}
