package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CtrGeneratorTest {
  /** Rank-based AUC (Mann-Whitney U) with ties counted one half, by pairwise counting. */
  static double auc(float[] scores, float[] labels) {
    Integer[] pos = java.util.stream.IntStream.range(0, labels.length).filter(i -> labels[i] > 0.5f)
        .boxed().toArray(Integer[]::new);
    float[] negScores = new float[labels.length - pos.length];
    int k = 0;
    for (int i = 0; i < labels.length; i++) if (labels[i] <= 0.5f) negScores[k++] = scores[i];
    Arrays.sort(negScores);
    double wins = 0;
    for (int p : pos) {
      float s = scores[p];
      int below = lowerBound(negScores, s);
      int notAbove = upperBound(negScores, s);
      wins += below + 0.5 * (notAbove - below);
    }
    return wins / ((double) pos.length * negScores.length);
  }

  private static int lowerBound(float[] a, float v) {
    int lo = 0, hi = a.length;
    while (lo < hi) {
      int m = (lo + hi) >>> 1;
      if (a[m] < v) lo = m + 1; else hi = m;
    }
    return lo;
  }

  private static int upperBound(float[] a, float v) {
    int lo = 0, hi = a.length;
    while (lo < hi) {
      int m = (lo + hi) >>> 1;
      if (a[m] <= v) lo = m + 1; else hi = m;
    }
    return lo;
  }

  @Test
  void aucHelperMatchesAHandCountedExample() {
    // positives 0.8, 0.4; negatives 0.5, 0.4, 0.1: pairs won 3 + (1 + 0.5) of 6.
    assertEquals(4.5 / 6, auc(new float[] {0.8f, 0.5f, 0.4f, 0.4f, 0.1f}, new float[] {1, 0, 1, 0, 0}), 1e-12);
  }

  @Test
  void rowsUsedCountsEachIdOnce() {
    CtrDataset d = new CtrDataset(2, 0, 10, new int[] {1, 3, 3, 9, 1, 0}, new float[0], new float[3], new float[3]);
    assertEquals(4, d.rowsUsed());
  }

  @Test
  void sameSeedGivesIdenticalDataAndAnotherSeedDoesNot() {
    CtrDataset a = new CtrGenerator(CtrGenerator.Config.defaults(42)).generate(2000);
    CtrDataset b = new CtrGenerator(CtrGenerator.Config.defaults(42)).generate(2000);
    CtrDataset c = new CtrGenerator(CtrGenerator.Config.defaults(43)).generate(2000);
    assertArrayEquals(a.ids(), b.ids());
    assertArrayEquals(a.dense(), b.dense());
    assertArrayEquals(a.labels(), b.labels());
    assertArrayEquals(a.probabilities(), b.probabilities());
    assertFalse(Arrays.equals(a.ids(), c.ids()));
    assertFalse(Arrays.equals(a.labels(), c.labels()));
  }

  @Test
  void aRangeGeneratedAloneEqualsTheSameRowsOfTheWhole() {
    CtrGenerator g = new CtrGenerator(CtrGenerator.Config.defaults(7));
    CtrDataset whole = g.generate(1000);
    CtrDataset part = g.generate(600, 700);
    int f = whole.fields();
    assertArrayEquals(Arrays.copyOfRange(whole.ids(), 600 * f, 700 * f), part.ids());
    assertArrayEquals(Arrays.copyOfRange(whole.dense(), 600 * 4, 700 * 4), part.dense());
    assertArrayEquals(Arrays.copyOfRange(whole.labels(), 600, 700), part.labels());
  }

  @Test
  void plantedModelRanksItsOwnClicksWellAndLabelsFollowProbabilities() {
    CtrGenerator g = new CtrGenerator(CtrGenerator.Config.defaults(1));
    CtrDataset d = g.generate(20000);
    double auc = auc(d.probabilities(), d.labels());
    assertTrue(auc > 0.75, "planted-model AUC " + auc);
    assertEquals(auc, d.bayesAuc(), 1e-9);
    double meanP = 0, clicks = 0;
    for (int i = 0; i < d.size(); i++) {
      meanP += d.probabilities()[i];
      clicks += d.labels()[i];
    }
    // 20000 Bernoulli draws: the click rate lies within 4 standard errors (< 0.015) of the mean probability.
    assertEquals(meanP / d.size(), clicks / d.size(), 0.015);
    assertTrue(clicks / d.size() > 0.1 && clicks / d.size() < 0.9, "click rate " + clicks / d.size());
  }

  @Test
  void probabilityIsTheSigmoidOfThePlantedLogit() {
    CtrGenerator g = new CtrGenerator(CtrGenerator.Config.defaults(3));
    CtrDataset d = g.generate(50);
    float[] wd = g.denseWeights();
    for (int i = 0; i < d.size(); i++) {
      double logit = g.config().bias();
      for (int f = 0; f < d.fields(); f++) logit += g.idWeight(d.ids()[i * d.fields() + f]);
      for (int j = 0; j < d.denseDim(); j++) logit += wd[j] * d.dense()[i * d.denseDim() + j];
      assertEquals(1 / (1 + Math.exp(-logit)), d.probabilities()[i], 1e-6);
    }
  }

  @Test
  void idsAreFieldHashesWithZipfLikeFrequencies() {
    CtrGenerator.Config cfg = new CtrGenerator.Config(2, 1000, 1 << 20, 0, 1.1, 0.8, 0.5, 0, 9);
    CtrDataset d = new CtrGenerator(cfg).generate(20000);
    Map<Integer, Integer> counts = new HashMap<>();
    for (int i = 0; i < d.size(); i++) counts.merge(d.ids()[i * 2], 1, Integer::sum);
    // The most frequent value of field 0 is value 0: with exponent 1.1 over 1000 values it has
    // probability 1 / H(1000, 1.1), about 0.18.
    int top = CtrGenerator.hashId(0, 0, 1 << 20);
    assertEquals(counts.values().stream().max(Integer::compare).orElseThrow(), counts.get(top));
    assertEquals(0.18, counts.get(top) / 20000.0, 0.02);
    assertTrue(counts.size() > 300, "distinct values seen: " + counts.size());
    assertTrue(CtrGenerator.hashId(0, 5, 1 << 20) != CtrGenerator.hashId(1, 5, 1 << 20));
    int[] dst = new int[4];
    d.copyIds(new int[] {3, 1}, 0, 2, dst);
    assertArrayEquals(new int[] {d.ids()[6], d.ids()[7], d.ids()[2], d.ids()[3]}, dst);
  }
}
