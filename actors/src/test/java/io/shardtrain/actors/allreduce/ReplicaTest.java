package io.shardtrain.actors.allreduce;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Sgd;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplicaTest {

  private static Parameter parameter(String name, float... values) {
    return new Parameter(name, Tensor.of(values, values.length));
  }

  @Test
  void aStepAppliesTheMeanGradientsToEveryParameterInPlaceOnTheScheduleOfTheExamplesApplied() {
    Parameter w = parameter("w", 1f, 2f, 3f);
    Parameter b = parameter("b", -1f);
    // lr 0.5, halved every 2 planned updates of 128 examples.
    Replica replica = new Replica(List.of(w, b), new Sgd(0f), LearningRateSchedule.parse("step:2:0.5", 0.5f), 128);
    float[] wValues = w.value().data();

    System.arraycopy(new float[] {0.2f, -0.4f, 1f}, 0, w.grad().data(), 0, 3);
    b.grad().data()[0] = 2f;
    replica.apply(128);
    assertArrayEquals(new float[] {1f - 0.5f * 0.2f, 2f + 0.5f * 0.4f, 3f - 0.5f * 1f}, w.value().data());
    assertArrayEquals(new float[] {-1f - 0.5f * 2f}, b.value().data());
    assertEquals(wValues, w.value().data(), "in place");

    // A step with fewer examples (a short last batch) moves the schedule by what it applied.
    replica.apply(256);
    assertEquals(384, replica.examplesApplied());
    float before = w.value().data()[0];
    replica.apply(64);
    // Position 384 / 128 = 3 planned updates: past the first halving, lr 0.25.
    assertEquals(before - 0.25f * 0.2f, w.value().data()[0]);
    assertEquals(3, replica.updates());
  }

  @Test
  void aStepWithoutExamplesChangesNothing() {
    Parameter w = parameter("w", 1f, 2f);
    Replica replica = new Replica(List.of(w), new Sgd(0f), LearningRateSchedule.parse("constant", 0.1f), 64);
    w.grad().data()[0] = 5f;
    replica.apply(0);
    assertArrayEquals(new float[] {1f, 2f}, w.value().data());
    assertEquals(0, replica.updates());
    assertEquals(0, replica.examplesApplied());
  }

  @Test
  void aRestoredReplicaTakesTheNextStepsExactlyAsTheOneItWasExportedFrom() {
    // Adam: slots (moments) and the update count both shape every later step.
    Parameter w1 = parameter("w", 0.5f, -1f, 2f);
    Parameter b1 = parameter("b", 0.1f);
    Replica source = new Replica(List.of(w1, b1), new io.shardtrain.compute.optim.Adam(0.9f, 0.999f, 1e-8f, 0f, false),
        LearningRateSchedule.parse("constant", 0.01f), 32);
    float[][] grads = {{0.3f, -0.2f, 0.1f, 0.5f}, {-0.1f, 0.4f, 0.2f, -0.3f}, {0.2f, 0.2f, -0.6f, 0.1f}};
    for (int k = 0; k < 2; k++) step(source, w1, b1, grads[k], 32);

    Parameter w2 = parameter("w", 9f, 9f, 9f);
    Parameter b2 = parameter("b", 9f);
    Replica joiner = new Replica(List.of(w2, b2), new io.shardtrain.compute.optim.Adam(0.9f, 0.999f, 1e-8f, 0f, false),
        LearningRateSchedule.parse("constant", 0.01f), 32);
    List<float[]> parts = source.export();
    // Per parameter its values, then Adam's two moments.
    assertEquals(6, parts.size());
    assertEquals(parts.size(), joiner.parts());
    joiner.restore(parts, source.examplesApplied(), source.updates());
    assertEquals(64, joiner.examplesApplied());
    assertEquals(2, joiner.updates());

    step(source, w1, b1, grads[2], 32);
    step(joiner, w2, b2, grads[2], 32);
    assertArrayEquals(w1.value().data(), w2.value().data());
    assertArrayEquals(b1.value().data(), b2.value().data());
  }

  private static void step(Replica r, Parameter w, Parameter b, float[] grad, int examples) {
    System.arraycopy(grad, 0, w.grad().data(), 0, 3);
    b.grad().data()[0] = grad[3];
    r.apply(examples);
  }
}
