package io.shardtrain.compute.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class AucTest {

  @Test
  void exactAucCountsTiesAsHalfOnAHandMadeExample() {
    float[] scores = {0.1f, 0.4f, 0.35f, 0.8f, 0.4f};
    float[] labels = {0f, 0f, 1f, 1f, 1f};
    // Positives 0.35, 0.8, 0.4 against negatives 0.1, 0.4:
    // 0.35 beats 0.1 (1), loses to 0.4 (0); 0.8 beats both (2); 0.4 beats 0.1 (1), ties 0.4 (1/2).
    // 4.5 of 3 * 2 = 6 pairs.
    assertEquals(0.75, Auc.exact(scores, labels), 1e-12);
  }

  @Test
  void exactAucIsOneHalfWhenEveryScoreTies() {
    assertEquals(0.5, Auc.exact(new float[] {0.3f, 0.3f, 0.3f, 0.3f}, new float[] {1f, 0f, 0f, 1f}), 1e-12);
  }

  @Test
  void exactAucOrdersNegativeScoresAndSignedZerosCorrectly() {
    // Positives -0.0 and 2.5 against negatives -1.5 and +0.0: -0.0 beats -1.5, ties +0.0 (1.5);
    // 2.5 beats both (2). 3.5 of 4.
    float[] scores = {-0.0f, 2.5f, -1.5f, 0.0f};
    float[] labels = {1f, 1f, 0f, 0f};
    assertEquals(0.875, Auc.exact(scores, labels), 1e-12);
  }

  @Test
  void exactAucIsNaNForOneClass() {
    assertTrue(Double.isNaN(Auc.exact(new float[] {0.1f, 0.9f}, new float[] {1f, 1f})));
  }

  @Test
  void exactAucRejectsBadInput() {
    assertThrows(IllegalArgumentException.class, () -> Auc.exact(new float[2], new float[3]));
    IllegalArgumentException label = assertThrows(IllegalArgumentException.class,
        () -> Auc.exact(new float[] {0.1f, 0.2f}, new float[] {0f, 0.5f}));
    assertTrue(label.getMessage().contains("0.5") && label.getMessage().contains("index 1"), label.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Auc.exact(new float[] {Float.NaN, 0.2f}, new float[] {0f, 1f}));
  }

  /** 100k scores: positives ~ sigmoid(N(0.8, 1)), negatives ~ sigmoid(N(-0.3, 1)). */
  private static float[][] overlappingScores(long seed) {
    Random rnd = new Random(seed);
    int n = 100_000;
    float[] scores = new float[n];
    float[] labels = new float[n];
    for (int i = 0; i < n; i++) {
      boolean positive = rnd.nextDouble() < 0.3;
      double z = rnd.nextGaussian() + (positive ? 0.8 : -0.3);
      scores[i] = (float) (1 / (1 + Math.exp(-z)));
      labels[i] = positive ? 1f : 0f;
    }
    return new float[][] {scores, labels};
  }

  @Test
  void histogramAucMatchesExactAucWithinOneThousandth() {
    float[][] data = overlappingScores(42);
    AucHistogram h = new AucHistogram(10_000);
    h.add(data[0], data[1]);
    double exact = Auc.exact(data[0], data[1]);
    // Separation 1.1 sigma gives AUC = Phi(1.1 / sqrt 2) ~ 0.78: far from 0.5 and 1.
    assertTrue(exact > 0.74 && exact < 0.82, "exact AUC " + exact);
    assertEquals(exact, h.auc(), 1e-3);
    assertEquals(100_000, h.count());
  }

  @Test
  void mergingTwoHalvesEqualsTheHistogramOfTheWhole() {
    float[][] data = overlappingScores(7);
    int n = data[0].length;
    AucHistogram whole = new AucHistogram(10_000);
    whole.add(data[0], data[1]);
    AucHistogram first = new AucHistogram(10_000);
    AucHistogram second = new AucHistogram(10_000);
    for (int i = 0; i < n; i++) {
      (i < n / 2 ? first : second).add(data[0][i], data[1][i] == 1f);
    }
    // Over the wire: the second half travels as its two count arrays.
    first.merge(AucHistogram.of(second.positives(), second.negatives()));
    assertArrayEquals(whole.positives(), first.positives());
    assertArrayEquals(whole.negatives(), first.negatives());
    assertEquals(whole.auc(), first.auc(), 0.0);
    assertEquals(n, first.count());
  }

  @Test
  void histogramAucOnHandCountsTreatsSameBinPairsAsTies() {
    // 4 bins. Positives: bin 1 x1, bin 3 x2. Negatives: bin 0 x2, bin 1 x1.
    // Pairs positive over negative: bin-1 positive beats 2 negatives in bin 0 and ties 1 in bin 1
    // (2.5); each bin-3 positive beats all 3 negatives (6). 8.5 of 3 * 3 = 9.
    AucHistogram h = AucHistogram.of(new long[] {0, 1, 0, 2}, new long[] {2, 1, 0, 0});
    assertEquals(8.5 / 9, h.auc(), 1e-12);
    assertEquals(6, h.count());
  }

  @Test
  void histogramPutsScoreOneInTheLastBinAndRejectsScoresOutsideTheUnitInterval() {
    AucHistogram h = new AucHistogram(10);
    h.add(1.0f, true);
    h.add(0.0f, false);
    h.add(0.55f, false);
    assertArrayEquals(new long[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, h.positives());
    assertArrayEquals(new long[] {1, 0, 0, 0, 0, 1, 0, 0, 0, 0}, h.negatives());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.add(1.01f, true));
    assertTrue(e.getMessage().contains("1.01"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> h.add(Float.NaN, true));
    // A bad label in a batch leaves the histogram untouched.
    assertThrows(IllegalArgumentException.class,
        () -> h.add(new float[] {0.2f, 0.3f}, new float[] {1f, 2f}));
    assertEquals(3, h.count());
  }

  @Test
  void histogramIsNaNUntilBothClassesAreSeen() {
    AucHistogram h = new AucHistogram(100);
    assertTrue(Double.isNaN(h.auc()));
    h.add(0.3f, true);
    assertTrue(Double.isNaN(h.auc()));
    h.add(0.2f, false);
    assertEquals(1.0, h.auc(), 0.0);
  }

  @Test
  void histogramRejectsMismatchedBinsAndBadCounts() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new AucHistogram(100).merge(new AucHistogram(200)));
    assertTrue(e.getMessage().contains("100") && e.getMessage().contains("200"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> AucHistogram.of(new long[3], new long[4]));
    assertThrows(IllegalArgumentException.class, () -> AucHistogram.of(new long[] {1, -1}, new long[2]));
    assertThrows(IllegalArgumentException.class, () -> new AucHistogram(0));
    assertThrows(IllegalArgumentException.class,
        () -> new AucHistogram(10).add(new float[3], new float[2]));
  }
}
