package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class LayerReadinessTest {

  @Test
  void aLayerRunsOnceEveryBlockOfItsWeightsAndBiasArrivedAndEveryLayerBeforeItRan() {
    LayerReadiness r = new LayerReadiness(List.of(
        List.of("dense1.weight#0", "dense1.weight#1", "dense1.bias#0"),
        List.of("dense2.weight#0", "dense2.bias#0"),
        List.of("dense3.weight#0", "dense3.bias#0")));
    assertEquals(3, r.layers());

    // The second layer is complete first, but its input is the first layer's output.
    r.arrived("dense2.weight#0");
    r.arrived("dense2.bias#0");
    assertEquals(List.of(), r.takeRunnable());
    r.arrived("dense1.weight#1");
    r.arrived("dense1.bias#0");
    assertEquals(List.of(), r.takeRunnable(), "a weight block of the first layer is still out");
    r.arrived("dense1.weight#0");
    assertEquals(List.of(0, 1), r.takeRunnable());
    assertEquals(List.of(), r.takeRunnable(), "each layer runs once");
    assertEquals(2, r.ran());

    r.arrived("dense3.bias#0");
    assertEquals(List.of(), r.takeRunnable());
    r.arrived("dense3.weight#0");
    r.arrived("dense3.weight#0");
    assertEquals(List.of(2), r.takeRunnable());
    assertEquals(3, r.ran());
    assertEquals(List.of(), r.takeRunnable());
  }

  @Test
  void aBlockOfNoLayerChangesNothingAndALayerWithoutBlocksIsRefused() {
    LayerReadiness r = new LayerReadiness(List.of(List.of("a#0"), List.of("b#0")));
    r.arrived("other#0");
    assertEquals(List.of(), r.takeRunnable());
    r.arrived("a#0");
    assertEquals(List.of(0), r.takeRunnable());
    assertEquals(1, r.ran());
    assertThrows(IllegalArgumentException.class, () -> new LayerReadiness(List.of(List.of("a#0"), List.of())));
  }
}
