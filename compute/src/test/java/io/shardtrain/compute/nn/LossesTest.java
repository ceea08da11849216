package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link SoftmaxCrossEntropyLoss} and {@link BinaryCrossEntropyLoss}: hand-computed values and
 * the gradient of the returned mean loss against central differences (eps 1e-2, relative error
 * below 1e-3 with a 1e-3 floor; the loss comes back as a float, whose rounding is the noise).
 */
class LossesTest {
  private static final CpuBackend BACKEND = CpuBackend.create(1);

  @AfterAll
  static void close() {
    BACKEND.close();
  }

  @Test
  void softmaxCrossEntropyGradientMatchesCentralDifferences() {
    Random rnd = new Random(1);
    SoftmaxCrossEntropyLoss loss = new SoftmaxCrossEntropyLoss(BACKEND);
    Tensor logits = GradCheck.random(rnd, 2f, 3, 4);
    int[] labels = {2, 0, 3};
    loss.forward(logits, labels);
    float[] analytic = loss.backward().data().clone();
    GradCheck.checkAll("dLogits", logits.data(), analytic, 1e-2, 1e-3, () -> loss.forward(logits, labels));
  }

  @Test
  void softmaxCrossEntropyMatchesHandComputedValues() {
    SoftmaxCrossEntropyLoss loss = new SoftmaxCrossEntropyLoss(BACKEND);
    // Row 0: logits (0, ln 3) -> probs (1/4, 3/4), label 1 -> loss ln(4/3).
    // Row 1: logits (0, 0) -> probs (1/2, 1/2), label 0 -> loss ln 2.
    Tensor logits = Tensor.of(new float[] {0f, (float) Math.log(3), 0f, 0f}, 2, 2);
    float mean = loss.forward(logits, new int[] {1, 0});
    assertEquals((Math.log(4.0 / 3) + Math.log(2)) / 2, mean, 1e-6);
    assertArrayEquals(new float[] {0.25f, 0.75f, 0.5f, 0.5f}, loss.probabilities().data(), 1e-6f);
    assertArrayEquals(new float[] {0.125f, -0.125f, -0.25f, 0.25f}, loss.backward().data(), 1e-6f);
  }

  @Test
  void softmaxCrossEntropyRejectsBadLabelsAndEmptyBatches() {
    SoftmaxCrossEntropyLoss loss = new SoftmaxCrossEntropyLoss(BACKEND);
    Tensor logits = Tensor.zeros(2, 3);
    IllegalArgumentException range = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(logits, new int[] {0, 3}));
    assertTrue(range.getMessage().contains("label 3"), range.getMessage());
    IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(logits, new int[] {0}));
    assertTrue(count.getMessage().contains("[2, 3]"), count.getMessage());
    IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(Tensor.zeros(0, 3), new int[0]));
    assertTrue(empty.getMessage().contains("[0, 3]"), empty.getMessage());
    // A failed forward leaves nothing to hand out.
    assertThrows(IllegalStateException.class, loss::backward);
  }

  @Test
  void binaryCrossEntropyGradientMatchesCentralDifferencesForVectorAndColumn() {
    Random rnd = new Random(2);
    float[] labels = {1f, 0f, 0.3f, 1f, 0f};
    for (Tensor logits : new Tensor[] {GradCheck.random(rnd, 3f, 5), GradCheck.random(rnd, 3f, 5, 1)}) {
      BinaryCrossEntropyLoss loss = new BinaryCrossEntropyLoss(BACKEND);
      loss.forward(logits, labels);
      float[] analytic = loss.backward().data().clone();
      assertArrayEquals(logits.shape(), loss.backward().shape());
      GradCheck.checkAll("dLogits" + logits.shapeString(), logits.data(), analytic, 1e-2, 1e-3,
          () -> loss.forward(logits, labels));
    }
  }

  @Test
  void binaryCrossEntropyMatchesHandComputedValues() {
    BinaryCrossEntropyLoss loss = new BinaryCrossEntropyLoss(BACKEND);
    // logit ln 3 -> p = 3/4; label 1 -> ln(4/3); label 0 -> ln 4.
    float z = (float) Math.log(3);
    float mean = loss.forward(Tensor.of(new float[] {z, z}, 2, 1), new float[] {1f, 0f});
    assertEquals((Math.log(4.0 / 3) + Math.log(4)) / 2, mean, 1e-6);
    assertArrayEquals(new float[] {0.75f, 0.75f}, loss.probabilities().data(), 1e-6f);
    assertArrayEquals(new float[] {-0.125f, 0.375f}, loss.backward().data(), 1e-6f);
    // Saturated logits stay finite: a confident right answer costs ~0, a wrong one ~|z|.
    assertEquals(50.0, loss.forward(Tensor.of(new float[] {-100f, 100f}, 2), new float[] {1f, 1f}), 1e-4);
  }

  @Test
  void binaryCrossEntropyRejectsWideLogitsAndBadLabels() {
    BinaryCrossEntropyLoss loss = new BinaryCrossEntropyLoss(BACKEND);
    IllegalArgumentException wide = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(Tensor.zeros(3, 2), new float[6]));
    assertTrue(wide.getMessage().contains("[3, 2]"), wide.getMessage());
    IllegalArgumentException label = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(Tensor.zeros(2), new float[] {0f, 2f}));
    assertTrue(label.getMessage().contains("label 2.0"), label.getMessage());
    IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
        () -> loss.forward(Tensor.zeros(3), new float[2]));
    assertTrue(count.getMessage().contains("[3]"), count.getMessage());
  }
}
