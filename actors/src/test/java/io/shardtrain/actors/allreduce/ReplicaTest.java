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
}
