package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.ReaderPosition;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrainerModelTest {
  /** 4 inputs, 5 hidden, 3 classes: weights of 20 and 15 floats, biases of 5 and 3; blocks of 8. */
  private static final List<String> BLOCKS = List.of("job/dense1.weight#0", "job/dense1.weight#1",
      "job/dense1.weight#2", "job/dense1.bias#0", "job/dense2.weight#0", "job/dense2.weight#1", "job/dense2.bias#0");

  private static JobSpec job(List<String> blocks) {
    return new JobSpec("job", "synthetic", 100, 4, 3, List.of(5), "relu", 7L, BlockSpec.Mode.SYNC, 1, 10, 1, 0,
        "sgd", 0.1f, "constant", 0f, -1, 8, blocks, null);
  }

  @Test
  void theLayoutOfAModelCutsEachParameterInOrder() {
    Mlp model = job(BLOCKS).newModel(CpuBackend.create(1));
    List<BlockSlice> layout = job(BLOCKS).layout(model);
    assertEquals(BLOCKS, layout.stream().map(BlockSlice::entityId).toList());
    assertEquals(new BlockSlice("job", "dense1.weight", 2, 16, 4), layout.get(2));
    assertEquals(new BlockSlice("job", "dense2.weight", 1, 8, 7), layout.get(5));
  }

  @Test
  void theTrainersModelHasTheJobsBlocksAndTakesInPulledValues() {
    try (TrainerModel model = TrainerModel.build("t1", job(BLOCKS), () -> CpuBackend.create(1))) {
      assertEquals(BLOCKS, model.blocks());
      float[] values = {1f, 2f, 3f, 4f, 5f, 6f, 7f};
      model.write(new BlockProtocol.BlockValues("dense2.weight", 1, 8, 3, values));
      Dataset data = Dataset.classification(new float[] {1f, 0f, 0f, 1f, 0f, 1f, 1f, 0f}, 4, new int[] {0, 2}, 3);
      Batch batch = new BatchReader(data, 2, 1, false, new ReaderPosition(0, 0)).next();
      List<Parameter> handedOut = new ArrayList<>();
      float loss = model.forwardBackward(batch, handedOut::add);

      assertEquals(List.of("dense2.weight", "dense2.bias", "dense1.weight", "dense1.bias"),
          handedOut.stream().map(Parameter::name).toList(), "last layer first");
      Parameter w2 = handedOut.get(0);
      assertArrayEquals(values, java.util.Arrays.copyOfRange(w2.value().data(), 8, 15));
      assertEquals(List.of(new BlockSlice("job", "dense2.weight", 0, 0, 8), new BlockSlice("job", "dense2.weight", 1, 8, 7)),
          model.slicesOf(w2));
      float[] slice = TrainerModel.gradientOf(w2, model.slicesOf(w2).get(1));
      assertArrayEquals(java.util.Arrays.copyOfRange(w2.grad().data(), 8, 15), slice);
      assertTrue(loss > 0f, "loss " + loss);
    }
  }

  @Test
  void eachLayersForwardWaitsForTheBlocksOfItsWeightsAndBias() {
    try (TrainerModel model = TrainerModel.build("t1", job(BLOCKS), () -> CpuBackend.create(1))) {
      assertEquals(List.of(BLOCKS.subList(0, 4), BLOCKS.subList(4, 7)), model.blocksByLayer());
    }
  }

  @Test
  void aForwardBegunOnABatchAndRunAheadOneLayerEndsWithTheOneCallStepsLossAndGradients() {
    Dataset data = Dataset.classification(new float[] {1f, 0f, 0f, 1f, 0f, 1f, 1f, 0f}, 4, new int[] {0, 2}, 3);
    try (TrainerModel whole = TrainerModel.build("t1", job(BLOCKS), () -> CpuBackend.create(1));
        TrainerModel layered = TrainerModel.build("t2", job(BLOCKS), () -> CpuBackend.create(1))) {
      Batch batch = new BatchReader(data, 2, 1, false, new ReaderPosition(0, 0)).next();
      List<float[]> expected = new ArrayList<>();
      float expectedLoss = whole.forwardBackward(batch, p -> expected.add(p.grad().data().clone()));
      layered.beginForward(batch);
      layered.forwardLayer(0);
      List<float[]> gradients = new ArrayList<>();
      float loss = layered.finishForwardBackward(batch, p -> gradients.add(p.grad().data().clone()));

      assertEquals(Float.floatToRawIntBits(expectedLoss), Float.floatToRawIntBits(loss));
      assertEquals(4, gradients.size());
      for (int i = 0; i < 4; i++) assertArrayEquals(expected.get(i), gradients.get(i));
    }
  }

  @Test
  void aJobWhoseBlocksAreNotTheModelsIsRefused() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> TrainerModel.build("t1", job(BLOCKS.subList(0, 6)), () -> CpuBackend.create(1)));
    assertEquals("trainer t1: the model's blocks " + BLOCKS + " differ from the job's " + BLOCKS.subList(0, 6),
        e.getMessage());
  }
}
