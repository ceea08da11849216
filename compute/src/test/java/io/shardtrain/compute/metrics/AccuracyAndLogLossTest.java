package io.shardtrain.compute.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AccuracyAndLogLossTest {

  @Test
  void accuracyIsTheFractionOfMatchingIds() {
    int[] predicted = {0, 2, 1, 1, 3};
    int[] labels = {0, 1, 1, 1, 2};
    assertEquals(3, Accuracy.correct(predicted, labels));
    assertEquals(0.6, Accuracy.of(predicted, labels), 1e-12);
  }

  @Test
  void accuracyRejectsMismatchedLengthsAndEmptyInput() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Accuracy.of(new int[3], new int[4]));
    assertTrue(e.getMessage().contains("3") && e.getMessage().contains("4"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Accuracy.of(new int[0], new int[0]));
  }

  @Test
  void logLossAveragesTheClippedCrossEntropy() {
    float[] probs = {0.8f, 0.25f, 0f, 0.5f};
    float[] labels = {1f, 0f, 1f, 0f};
    // -ln 0.8 = 0.2231436, -ln 0.75 = 0.2876821, -ln 1e-7 (p = 0 clipped) = 16.1180957, -ln 0.5 = 0.6931472;
    // mean = 17.3220685 / 4
    assertEquals(4.3305171, LogLoss.binary(probs, labels), 1e-6);
  }

  @Test
  void logLossOfAConfidentRightAnswerIsTheClipFloor() {
    // p = 1 clipped to 1 - 1e-7: -ln(1 - 1e-7) = 1.00000005e-7
    assertEquals(1.0e-7, LogLoss.binary(new float[] {1f}, new float[] {1f}), 1e-12);
  }

  @Test
  void logLossRejectsBadInput() {
    assertThrows(IllegalArgumentException.class, () -> LogLoss.binary(new float[2], new float[3]));
    assertThrows(IllegalArgumentException.class, () -> LogLoss.binary(new float[0], new float[0]));
    IllegalArgumentException p = assertThrows(IllegalArgumentException.class,
        () -> LogLoss.binary(new float[] {0.5f, 1.5f}, new float[] {0f, 1f}));
    assertTrue(p.getMessage().contains("1.5") && p.getMessage().contains("index 1"), p.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> LogLoss.binary(new float[] {0.5f}, new float[] {Float.NaN}));
  }
}
