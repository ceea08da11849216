package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class FactorizationMachineTest {
  private static final int FIELDS = 3;
  private static final int DENSE = 2;
  private static final int K = 4;

  @Test
  void logitEqualsTheSumOfAllPairwiseInteractionsWrittenOut() {
    FactorizationMachine fm = new FactorizationMachine(FIELDS, DENSE, K);
    Random r = new Random(1);
    float[] rows = random(r, 4 * fm.rowWidth());
    float[] dense = random(r, fm.denseSize());
    int[] slots = {0, 2, 3, 1, 1, 3};
    float[] x = random(r, 2 * DENSE);
    float[] logits = new float[2];
    fm.forward(2, slots, rows, x, dense, logits);
    for (int i = 0; i < 2; i++) {
      // Features as (linear weight, latent vector, value), pairs summed by brute force.
      int m = FIELDS + DENSE;
      double[] lin = new double[m];
      double[][] vec = new double[m][K];
      double[] val = new double[m];
      for (int f = 0; f < FIELDS; f++) {
        int b = slots[i * FIELDS + f] * fm.rowWidth();
        lin[f] = rows[b];
        for (int c = 0; c < K; c++) vec[f][c] = rows[b + 1 + c];
        val[f] = 1;
      }
      for (int j = 0; j < DENSE; j++) {
        lin[FIELDS + j] = dense[1 + j];
        for (int c = 0; c < K; c++) vec[FIELDS + j][c] = dense[1 + DENSE + j * K + c];
        val[FIELDS + j] = x[i * DENSE + j];
      }
      double expected = dense[0];
      for (int a = 0; a < m; a++) {
        expected += lin[a] * val[a];
        for (int b = a + 1; b < m; b++) {
          double dot = 0;
          for (int c = 0; c < K; c++) dot += vec[a][c] * vec[b][c];
          expected += dot * val[a] * val[b];
        }
      }
      assertEquals(expected, logits[i], 1e-5 * Math.max(1, Math.abs(expected)));
    }
  }

  @Test
  void backwardMatchesFiniteDifferencesOfTheMeanLogLossIncludingSharedRows() {
    FactorizationMachine fm = new FactorizationMachine(FIELDS, DENSE, K);
    Random r = new Random(7);
    int n = 5;
    int rowCount = 4; // fewer rows than occurrences: rows are shared within and across examples
    float[] rows = random(r, rowCount * fm.rowWidth());
    float[] dense = random(r, fm.denseSize());
    int[] slots = new int[n * FIELDS];
    for (int k = 0; k < slots.length; k++) slots[k] = r.nextInt(rowCount);
    slots[0] = 2;
    slots[1] = 2; // the same row twice in one example
    float[] x = random(r, n * DENSE);
    float[] labels = {1, 0, 0, 1, 1};
    float[] logits = new float[n];
    float[] gradLogits = new float[n];
    fm.forward(n, slots, rows, x, dense, logits);
    FactorizationMachine.meanLogLoss(n, logits, labels, gradLogits, null);
    float[] rowGrad = new float[rows.length];
    float[] denseGrad = new float[fm.denseSize()];
    fm.backward(n, slots, rows, x, dense, gradLogits, rowGrad, denseGrad);

    double worst = 0;
    for (int p = 0; p < rows.length; p++) {
      worst = Math.max(worst, relErr(rowGrad[p], numeric(fm, n, slots, rows, x, dense, labels, rows, p)));
    }
    for (int p = 0; p < dense.length; p++) {
      worst = Math.max(worst, relErr(denseGrad[p], numeric(fm, n, slots, rows, x, dense, labels, dense, p)));
    }
    assertTrue(worst < 2e-3, "worst relative error " + worst);
    // A row no slot names gets no gradient.
    int[] onlyRowZero = new int[n * FIELDS];
    fm.forward(n, onlyRowZero, rows, x, dense, logits);
    FactorizationMachine.meanLogLoss(n, logits, labels, gradLogits, null);
    fm.backward(n, onlyRowZero, rows, x, dense, gradLogits, rowGrad, denseGrad);
    for (int p = fm.rowWidth(); p < rows.length; p++) assertEquals(0f, rowGrad[p]);
  }

  @Test
  void meanLogLossStaysFiniteForHugeLogitsAndMatchesTheDefinition() {
    float[] logits = {0f, 2f, -3f, 1000f, -1000f};
    float[] labels = {1, 0, 1, 1, 0};
    float[] grad = new float[5];
    float[] probs = new float[5];
    double loss = FactorizationMachine.meanLogLoss(5, logits, labels, grad, probs);
    double expected = (Math.log(2) + Math.log1p(Math.exp(2)) + Math.log1p(Math.exp(3)) + 0 + 0) / 5;
    assertEquals(expected, loss, 1e-9);
    assertEquals((1 / (1 + Math.exp(-2)) - 0) / 5, grad[1], 1e-7);
    assertEquals(1f, probs[3]);
    assertEquals(0f, probs[4]);
  }

  @Test
  void aSlotOutsideTheBatchRowsIsRefusedNamingIt() {
    FactorizationMachine fm = new FactorizationMachine(FIELDS, DENSE, K);
    var e = assertThrows(IllegalArgumentException.class, () -> fm.forward(1, new int[] {0, 5, 0},
        new float[2 * fm.rowWidth()], new float[DENSE], new float[fm.denseSize()], new float[1]));
    assertEquals("slot 5 at position 1 is outside the batch's 2 rows", e.getMessage());
  }

  private static double numeric(FactorizationMachine fm, int n, int[] slots, float[] rows, float[] x, float[] dense,
      float[] labels, float[] target, int p) {
    float saved = target[p];
    double h = 1e-2;
    target[p] = (float) (saved + h);
    double up = loss(fm, n, slots, rows, x, dense, labels);
    target[p] = (float) (saved - h);
    double down = loss(fm, n, slots, rows, x, dense, labels);
    target[p] = saved;
    return (up - down) / (2 * h);
  }

  private static double loss(FactorizationMachine fm, int n, int[] slots, float[] rows, float[] x, float[] dense,
      float[] labels) {
    float[] logits = new float[n];
    fm.forward(n, slots, rows, x, dense, logits);
    return FactorizationMachine.meanLogLoss(n, logits, labels, null, null);
  }

  private static double relErr(double a, double b) {
    return Math.abs(a - b) / Math.max(1e-2, Math.abs(a) + Math.abs(b));
  }

  private static float[] random(Random r, int n) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) a[i] = (float) (r.nextGaussian() * 0.5);
    return a;
  }
}
