package io.shardtrain.persistence.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelParametersTest {
  @TempDir
  Path tmp;

  private static final CpuBackend CPU = CpuBackend.create(1);

  private static Tensor inputs(int rows, int cols, long seed) {
    Random r = new Random(seed);
    float[] x = new float[rows * cols];
    for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
    return Tensor.wrap(x, rows, cols);
  }

  @Test
  void modelInitialisedFromSavedFilesPredictsIdentically() throws IOException {
    Mlp trained = Mlp.create(CPU, 6, new int[] {5, 4}, 3, Activation.TANH, 11);
    Tensor x = inputs(40, 6, 3);
    int[] y = new int[40];
    for (int i = 0; i < y.length; i++) y[i] = i % 3;
    // A few SGD steps so the values differ from any fresh initialisation.
    for (int step = 0; step < 5; step++) {
      trained.forwardBackward(x, y, p -> CPU.axpy(-0.5f, p.grad(), p.value()));
    }
    ModelSnapshot snap = ModelParameters.snapshot(trained.parameters(),
        Map.of("model", "mlp", "inputDim", "6", "hidden", "5,4", "classes", "3",
            "activation", "tanh"), 5);
    assertEquals(List.of("dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias",
        "dense3.weight", "dense3.bias"), snap.names());
    assertEquals(trained.parameterCount(), snap.parameterCount());
    ModelFiles.save(tmp.resolve("m"), snap);

    Mlp fresh = Mlp.create(CPU, 6, new int[] {5, 4}, 3, Activation.TANH, 999);
    float[] before = fresh.logits(x).data().clone();
    ModelParameters.copyInto(ModelFiles.load(tmp.resolve("m")), fresh.parameters());

    float[] expected = trained.logits(x).data().clone();
    float[] actual = fresh.logits(x).data().clone();
    assertFalse(java.util.Arrays.equals(before, expected), "seeds give different models");
    assertArrayEquals(expected, actual);
    assertArrayEquals(trained.predict(x), fresh.predict(x));
    for (int i = 0; i < trained.parameters().size(); i++) {
      assertArrayEquals(trained.parameters().get(i).value().data(),
          fresh.parameters().get(i).value().data());
    }
  }

  @Test
  void snapshotCopiesValuesAndToParametersCopiesBack() {
    Mlp m = Mlp.create(CPU, 3, new int[] {}, 2, Activation.RELU, 1);
    ModelSnapshot snap = ModelParameters.snapshot(m.parameters(), Map.of(), 0);
    float w0 = m.parameters().get(0).value().data()[0];
    m.parameters().get(0).value().data()[0] = 42f;
    assertEquals(w0, snap.parameter("dense1.weight").values()[0]);

    List<Parameter> ps = ModelParameters.toParameters(snap);
    assertEquals(2, ps.size());
    assertEquals("dense1.bias", ps.get(1).name());
    assertArrayEquals(new int[] {3, 2}, ps.get(0).shape());
    assertEquals(w0, ps.get(0).value().data()[0]);
    ps.get(0).value().data()[0] = 7f;
    assertEquals(w0, snap.parameter("dense1.weight").values()[0], "toParameters copies");
  }

  @Test
  void shapeMismatchNamesBothShapesAndLeavesTheModelUnchanged() {
    Mlp small = Mlp.create(CPU, 4, new int[] {3}, 2, Activation.RELU, 1);
    Mlp wider = Mlp.create(CPU, 4, new int[] {5}, 2, Activation.RELU, 2);
    ModelSnapshot snap = ModelParameters.snapshot(small.parameters(), Map.of(), 0);
    List<float[]> before = new ArrayList<>();
    for (Parameter p : wider.parameters()) before.add(p.value().data().clone());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelParameters.copyInto(snap, wider.parameters()));
    assertEquals("parameter dense1.weight has shape [4, 3] in the saved model but [4, 5] in the "
        + "model", e.getMessage());
    for (int i = 0; i < before.size(); i++) {
      assertArrayEquals(before.get(i), wider.parameters().get(i).value().data());
    }
  }

  @Test
  void missingAndExtraNamesAreReported() {
    Mlp twoLayer = Mlp.create(CPU, 4, new int[] {3}, 2, Activation.RELU, 1);
    Mlp oneLayer = Mlp.create(CPU, 4, new int[] {}, 3, Activation.RELU, 1);
    ModelSnapshot fromOne = ModelParameters.snapshot(oneLayer.parameters(), Map.of(), 0);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelParameters.copyInto(fromOne, twoLayer.parameters()));
    assertEquals("the model's parameter dense2.weight is not in the saved model, which has "
        + "[dense1.weight, dense1.bias]", e.getMessage());

    ModelSnapshot fromTwo = ModelParameters.snapshot(twoLayer.parameters(), Map.of(), 0);
    Mlp sameFirst = Mlp.create(CPU, 4, new int[] {}, 3, Activation.RELU, 5);
    e = assertThrows(IllegalArgumentException.class,
        () -> ModelParameters.copyInto(fromTwo, sameFirst.parameters()));
    assertEquals("the saved model has parameters the model lacks: [dense2.weight, dense2.bias]",
        e.getMessage());
  }
}
