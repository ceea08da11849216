package io.shardtrain.compute.optim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Every optimizer against three updates worked out by hand. The expected numbers are literals;
 * the comments show the arithmetic that produced them.
 */
class OptimizerHandComputedTest {
  private static final float TOL = 1e-6f;

  /** Applies one update with the given step and rate, and returns the weights for chaining. */
  private static float[] apply(Optimizer opt, float[] w, float[] g, float[][] slots, long step, float lr) {
    opt.apply(w, g, slots, step, lr);
    return w;
  }

  @Test
  void sgdMatchesHandComputedValuesForThreeSteps() {
    Optimizer sgd = new Sgd(0f);
    float[] w = {1.0f, -2.0f, 0.5f};
    float[] g = {0.5f, -1.0f, 2.0f};
    float[][] slots = sgd.newSlots(3);
    // w -= 0.1 * g, with 0.1 * g = [0.05, -0.1, 0.2]
    assertArrayEquals(new float[] {0.95f, -1.9f, 0.3f}, apply(sgd, w, g, slots, 1, 0.1f), TOL);
    assertArrayEquals(new float[] {0.90f, -1.8f, 0.1f}, apply(sgd, w, g, slots, 2, 0.1f), TOL);
    assertArrayEquals(new float[] {0.85f, -1.7f, -0.1f}, apply(sgd, w, g, slots, 3, 0.1f), TOL);
  }

  @Test
  void sgdWithWeightDecayMatchesHandComputedValuesForThreeSteps() {
    Optimizer sgd = new Sgd(0.1f);
    float[] w = {1.0f, -2.0f};
    float[] g = {0.5f, 0.5f};
    float[][] slots = sgd.newSlots(2);
    // g' = g + 0.1 * w = [0.5 + 0.1, 0.5 - 0.2] = [0.6, 0.3]; w -= 0.1 * g' -> [1 - 0.06, -2 - 0.03]
    assertArrayEquals(new float[] {0.94f, -2.03f}, apply(sgd, w, g, slots, 1, 0.1f), TOL);
    // g' = [0.5 + 0.094, 0.5 - 0.203] = [0.594, 0.297]; w -> [0.94 - 0.0594, -2.03 - 0.0297]
    assertArrayEquals(new float[] {0.8806f, -2.0597f}, apply(sgd, w, g, slots, 2, 0.1f), TOL);
    // g' = [0.5 + 0.08806, 0.5 - 0.20597] = [0.58806, 0.29403]; w -> [0.8806 - 0.058806, -2.0597 - 0.029403]
    assertArrayEquals(new float[] {0.821794f, -2.089103f}, apply(sgd, w, g, slots, 3, 0.1f), TOL);
  }

  @Test
  void momentumMatchesHandComputedValuesForThreeSteps() {
    Optimizer opt = new Momentum(0.9f, false, 0f);
    float[] w = {1.0f, -2.0f};
    float[] g = {0.5f, -1.0f};
    float[][] slots = opt.newSlots(2);
    // v = 0.9 * 0 + g = [0.5, -1]; w -= 0.1 * v -> [1 - 0.05, -2 + 0.1]
    assertArrayEquals(new float[] {0.95f, -1.9f}, apply(opt, w, g, slots, 1, 0.1f), TOL);
    assertArrayEquals(new float[] {0.5f, -1.0f}, slots[0], TOL);
    // v = 0.9 * [0.5, -1] + g = [0.95, -1.9]; w -> [0.95 - 0.095, -1.9 + 0.19]
    assertArrayEquals(new float[] {0.855f, -1.71f}, apply(opt, w, g, slots, 2, 0.1f), TOL);
    assertArrayEquals(new float[] {0.95f, -1.9f}, slots[0], TOL);
    // v = 0.9 * [0.95, -1.9] + g = [1.355, -2.71]; w -> [0.855 - 0.1355, -1.71 + 0.271]
    assertArrayEquals(new float[] {0.7195f, -1.439f}, apply(opt, w, g, slots, 3, 0.1f), TOL);
    assertArrayEquals(new float[] {1.355f, -2.71f}, slots[0], TOL);
  }

  @Test
  void nesterovMatchesHandComputedValuesForThreeSteps() {
    Optimizer opt = new Momentum(0.9f, true, 0f);
    float[] w = {1.0f, -2.0f};
    float[] g = {0.5f, -1.0f};
    float[][] slots = opt.newSlots(2);
    // v = [0.5, -1]; update = g + 0.9 * v = [0.95, -1.9]; w -> [1 - 0.095, -2 + 0.19]
    assertArrayEquals(new float[] {0.905f, -1.81f}, apply(opt, w, g, slots, 1, 0.1f), TOL);
    // v = [0.95, -1.9]; update = [0.5 + 0.855, -1 - 1.71] = [1.355, -2.71]; w -> [0.905 - 0.1355, -1.81 + 0.271]
    assertArrayEquals(new float[] {0.7695f, -1.539f}, apply(opt, w, g, slots, 2, 0.1f), TOL);
    // v = [1.355, -2.71]; update = [0.5 + 1.2195, -1 - 2.439] = [1.7195, -3.439]; w -> [0.7695 - 0.17195, -1.539 + 0.3439]
    assertArrayEquals(new float[] {0.59755f, -1.1951f}, apply(opt, w, g, slots, 3, 0.1f), TOL);
    assertArrayEquals(new float[] {1.355f, -2.71f}, slots[0], TOL);
  }

  // Adam and AdamW: beta1 0.9, beta2 0.999, eps 1e-8, lr 0.1, w0 = [1, -1], gradients per step
  // g1 = [1, -0.5], g2 = [2, -0.5], g3 = [-1, -0.5]. Element 1 has a constant gradient, so its
  // corrected moments are exactly mhat = -0.5, vhat = 0.25 and each step moves it by
  // 0.1 * 0.5 / (0.5 + 1e-8) = 0.1 (to 2e-9).
  private static final float[][] ADAM_GRADS = {{1f, -0.5f}, {2f, -0.5f}, {-1f, -0.5f}};

  @Test
  void adamMatchesHandComputedValuesForThreeSteps() {
    Optimizer opt = new Adam(0.9f, 0.999f, 1e-8f, 0f, false);
    float[] w = {1f, -1f};
    float[][] slots = opt.newSlots(2);
    // t=1: m = 0.1 * g1 = [0.1, -0.05], v = 0.001 * g1^2 = [0.001, 0.00025];
    //      mhat = m / (1 - 0.9) = [1, -0.5], vhat = v / (1 - 0.999) = [1, 0.25];
    //      w -= 0.1 * mhat / (sqrt(vhat) + eps) = 0.1 * [1, -1]
    assertArrayEquals(new float[] {0.9f, -0.9f}, apply(opt, w, ADAM_GRADS[0], slots, 1, 0.1f), TOL);
    assertArrayEquals(new float[] {0.1f, -0.05f}, slots[0], TOL);
    assertArrayEquals(new float[] {0.001f, 0.00025f}, slots[1], TOL);
    // t=2: m0 = 0.9 * 0.1 + 0.1 * 2 = 0.29, v0 = 0.999 * 0.001 + 0.001 * 4 = 0.004999;
    //      mhat0 = 0.29 / (1 - 0.81) = 1.5263158, vhat0 = 0.004999 / (1 - 0.998001) = 2.5007504,
    //      sqrt(vhat0) = 1.5813761; w0 = 0.9 - 0.1 * 1.5263158 / 1.5813761 = 0.9 - 0.0965182 = 0.8034818
    assertArrayEquals(new float[] {0.8034818f, -0.8f}, apply(opt, w, ADAM_GRADS[1], slots, 2, 0.1f), TOL);
    assertArrayEquals(new float[] {0.29f, -0.095f}, slots[0], TOL);
    // t=3: m0 = 0.9 * 0.29 - 0.1 = 0.161, v0 = 0.999 * 0.004999 + 0.001 = 0.005994001;
    //      mhat0 = 0.161 / (1 - 0.729) = 0.5940959, vhat0 = 0.005994001 / (1 - 0.997002999) = 1.9999997,
    //      sqrt(vhat0) = 1.4142134; w0 = 0.8034818 - 0.1 * 0.5940959 / 1.4142134 = 0.8034818 - 0.0420089
    assertArrayEquals(new float[] {0.7614729f, -0.7f}, apply(opt, w, ADAM_GRADS[2], slots, 3, 0.1f), TOL);
    assertArrayEquals(new float[] {0.161f, -0.1355f}, slots[0], TOL);
    assertArrayEquals(new float[] {0.005994001f, 0.00074925025f}, slots[1], TOL);
  }

  @Test
  void adamWMatchesHandComputedValuesForThreeSteps() {
    Optimizer opt = new Adam(0.9f, 0.999f, 1e-8f, 0.1f, true);
    float[] w = {1f, -1f};
    float[][] slots = opt.newSlots(2);
    // Decoupled decay shrinks w by (1 - lr * wd) = 0.99 before the Adam step; the moments see the
    // raw gradients, so the Adam steps are those of the plain Adam test: [0.1, -0.1], [0.0965182, -0.1],
    // [-0.0420089 (i.e. a step of 0.0420089), -0.1].
    // t=1: [1 * 0.99 - 0.1, -1 * 0.99 + 0.1]
    assertArrayEquals(new float[] {0.89f, -0.89f}, apply(opt, w, ADAM_GRADS[0], slots, 1, 0.1f), TOL);
    // t=2: [0.89 * 0.99 - 0.0965182, -0.89 * 0.99 + 0.1] = [0.8811 - 0.0965182, -0.8811 + 0.1]
    assertArrayEquals(new float[] {0.7845818f, -0.7811f}, apply(opt, w, ADAM_GRADS[1], slots, 2, 0.1f), TOL);
    // t=3: [0.7845818 * 0.99 - 0.0420089, -0.7811 * 0.99 + 0.1] = [0.7767360 - 0.0420089, -0.773289 + 0.1]
    assertArrayEquals(new float[] {0.7347271f, -0.673289f}, apply(opt, w, ADAM_GRADS[2], slots, 3, 0.1f), TOL);
    assertArrayEquals(new float[] {0.161f, -0.1355f}, slots[0], TOL);
  }

  @Test
  void adaGradMatchesHandComputedValuesForThreeSteps() {
    AdaGrad opt = new AdaGrad(1e-10f, 0.1f, 0f);
    float[] w = {1f, -1f};
    float[][] slots = opt.newSlots(2);
    assertArrayEquals(new float[] {0.1f, 0.1f}, slots[0], 0f);
    // s = 0.1 + g1^2 = [1.1, 0.35]; sqrt = [1.0488088, 0.5916080];
    // w -= 0.1 * g1 / sqrt(s) = [1 - 0.0953463, -1 + 0.0845154]
    assertArrayEquals(new float[] {0.9046537f, -0.9154846f}, apply(opt, w, ADAM_GRADS[0], slots, 1, 0.1f), TOL);
    // s = [1.1 + 4, 0.35 + 0.25] = [5.1, 0.6]; sqrt = [2.2583180, 0.7745967];
    // w -> [0.9046537 - 0.2 / 2.2583180, -0.9154846 + 0.05 / 0.7745967] = [0.9046537 - 0.0885615, -0.9154846 + 0.0645497]
    assertArrayEquals(new float[] {0.8160922f, -0.8509349f}, apply(opt, w, ADAM_GRADS[1], slots, 2, 0.1f), TOL);
    // s = [5.1 + 1, 0.6 + 0.25] = [6.1, 0.85]; sqrt = [2.4698178, 0.9219544];
    // w -> [0.8160922 + 0.1 / 2.4698178, -0.8509349 + 0.05 / 0.9219544] = [0.8160922 + 0.0404888, -0.8509349 + 0.0542326]
    assertArrayEquals(new float[] {0.8565810f, -0.7967022f}, apply(opt, w, ADAM_GRADS[2], slots, 3, 0.1f), TOL);
    assertArrayEquals(new float[] {6.1f, 0.85f}, slots[0], TOL);
  }

  @Test
  void larsMatchesHandComputedValuesForThreeSteps() {
    // eta 0.1 (not the default 0.001) so the steps are large enough to check to 1e-6.
    Optimizer opt = new Lars(0.9f, 0.1f, 0.1f, 0f);
    float[] w = {3f, 4f};
    float[] g = {0.6f, 0.8f}; // ||g|| = 1
    float[][] slots = opt.newSlots(2);
    // t=1: ||w|| = 5; localLr = 0.1 * 5 / (1 + 0.1 * 5) = 1/3; g + wd*w = [0.9, 1.2];
    //      v = 1.0 * (1/3) * [0.9, 1.2] = [0.3, 0.4]; w -= v
    assertArrayEquals(new float[] {2.7f, 3.6f}, apply(opt, w, g, slots, 1, 1f), TOL);
    assertArrayEquals(new float[] {0.3f, 0.4f}, slots[0], TOL);
    // t=2: ||w|| = 4.5; localLr = 0.45 / 1.45; g + wd*w = [0.87, 1.16] = 0.6 * 1.45 * [1, 4/3];
    //      v = 0.9 * [0.3, 0.4] + (0.45 / 1.45) * [0.87, 1.16] = [0.27 + 0.27, 0.36 + 0.36] = [0.54, 0.72]
    assertArrayEquals(new float[] {2.16f, 2.88f}, apply(opt, w, g, slots, 2, 1f), TOL);
    assertArrayEquals(new float[] {0.54f, 0.72f}, slots[0], TOL);
    // t=3: ||w|| = 3.6; localLr = 0.36 / 1.36; g + wd*w = [0.816, 1.088] = 1.36 * [0.6, 0.8];
    //      v = 0.9 * [0.54, 0.72] + 0.36 * [0.6, 0.8] = [0.486 + 0.216, 0.648 + 0.288] = [0.702, 0.936]
    assertArrayEquals(new float[] {1.458f, 1.944f}, apply(opt, w, g, slots, 3, 1f), TOL);
    assertArrayEquals(new float[] {0.702f, 0.936f}, slots[0], TOL);
  }

  @Test
  void larsUsesTrustRatioOneWhenWeightsAreZero() {
    Optimizer opt = new Lars(0.9f, 0.001f, 0f, 0f);
    float[] w = {0f, 0f};
    float[][] slots = opt.newSlots(2);
    // ||w|| = 0 -> localLr = 1; v = 0.5 * 1 * [1, -2]; w = -v
    assertArrayEquals(new float[] {-0.5f, 1f}, apply(opt, w, new float[] {1f, -2f}, slots, 1, 0.5f), TOL);
  }

  @Test
  void larsTrustRatioIsPerBlock() {
    // The same parameter split in two blocks gets a ratio per block: [3, 4] and [0.6, 0.8] apart
    // give ratio eta * 5 / 1 and eta * 1 / 1, unlike the whole-array ratio of eta * 5.099 / 1.414.
    Optimizer opt = new Lars(0f, 0.1f, 0f, 0f);
    float[] a = {3f, 4f};
    float[] b = {0.6f, 0.8f};
    float[] ga = {0.6f, 0.8f};
    float[] gb = {0.6f, 0.8f};
    opt.apply(a, ga, opt.newSlots(2), 1, 1f);
    opt.apply(b, gb, opt.newSlots(2), 1, 1f);
    // a -= 0.5 * [0.6, 0.8]; b -= 0.1 * [0.6, 0.8]
    assertArrayEquals(new float[] {2.7f, 3.6f}, a, TOL);
    assertArrayEquals(new float[] {0.54f, 0.72f}, b, TOL);
  }

  @Test
  void adamBiasCorrectionFollowsTheBlocksOwnStep() {
    // The same state and gradient at step 1 and at step 1000 move the weight differently, because
    // step 1 divides m by 0.1 and sqrt(v) by sqrt(0.001), step 1000 by ~1 and ~sqrt(0.632).
    Optimizer opt = new Adam(0.9f, 0.999f, 0f, 0f, false);
    float[] early = {0f};
    float[] late = {0f};
    opt.apply(early, new float[] {1f}, opt.newSlots(1), 1, 1f);
    opt.apply(late, new float[] {1f}, opt.newSlots(1), 1000, 1f);
    // early: mhat = 1, vhat = 1 -> -1. late: m = 0.1, v = 0.001, c1 = 1 - 0.9^1000 = 1,
    // c2 = 1 - 0.999^1000 = 0.6323046; step = 0.1 / sqrt(0.001 / 0.6323046) = 0.1 / 0.0397683 = 2.5145667.
    // 1e-4 here: 0.999f is 0.99900001, which moves 0.999^1000 in the fifth digit.
    assertEquals(-1f, early[0], TOL);
    assertEquals(-2.5145667f, late[0], 1e-4f);
  }
}
