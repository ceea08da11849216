package io.shardtrain.samples.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.backend.TimedBackend;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The single process's training loop: the same model on one compute thread and on two. */
class SingleProcessTrainingTest {

  /** Four classes of 300 features, each class a shifted blob: wide enough for two threads to cut every layer. */
  private static Dataset blobs(int rows, long seed) {
    int dim = 300;
    Random r = new Random(seed);
    float[] x = new float[rows * dim];
    int[] y = new int[rows];
    for (int i = 0; i < rows; i++) {
      y[i] = r.nextInt(4);
      for (int j = 0; j < dim; j++) x[i * dim + j] = (float) r.nextGaussian() + (j % 4 == y[i] ? 1f : 0f);
    }
    return Dataset.classification(x, dim, y, 4);
  }

  private static SingleProcessTraining.Result train(String optimizer, int threads) {
    return train(optimizer, CpuBackend.create(threads));
  }

  private static SingleProcessTraining.Result train(String optimizer, Backend backend) {
    return train(optimizer, backend, 0);
  }

  /** 30 steps; a profile leaves out the first {@code profileSkip}. */
  private static SingleProcessTraining.Result train(String optimizer, Backend backend, long profileSkip) {
    TrainSettings settings = new TrainSettings("blobs", new int[] {300, 128}, "relu", "auto", optimizer, 0.01, "constant",
        0.0, 64, 0, 30, 42, 0, "cpu", backend.threads(), null, null, null);
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    try (backend) {
      return new SingleProcessTraining(settings, backend, ProgressBar.messagesOnly(quiet), new MetricsLog(),
          profileSkip).run(blobs(1280, 1), blobs(256, 2));
    }
  }

  private static void twoThreadsTrainTheModelOfOne(String optimizer) {
    SingleProcessTraining.Result one = train(optimizer, 1);
    SingleProcessTraining.Result two = train(optimizer, 2);
    assertEquals(one.finalLoss(), two.finalLoss());
    assertEquals(one.testAccuracy(), two.testAccuracy());
    List<Parameter> a = one.model().parameters(), b = two.model().parameters();
    for (int i = 0; i < a.size(); i++) {
      assertArrayEquals(a.get(i).value().data(), b.get(i).value().data(), a.get(i).name());
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void aProfileOfTwoThreadsShowsTheCrewStepAndEachThreadsPhasesAndTrainsTheSameModel() {
    SingleProcessTraining.Result one = train("sgd", 1);
    SingleProcessTraining.Result profiled = train("sgd", TimedBackend.wrap(CpuBackend.create(2)));
    assertEquals(one.finalLoss(), profiled.finalLoss());
    Map<String, Object> json = profiled.profile().json();
    List<Map<String, Object>> ops = (List<Map<String, Object>>) json.get("ops");
    Map<String, Object> crew = ops.stream().filter(o -> o.get("op").equals("crew step")).findFirst().orElseThrow();
    assertEquals(30L, crew.get("calls"), "every step ran on the crew: " + ops);
    assertEquals(Set.of("crew step", "optimizer", "data", "other"),
        ops.stream().map(o -> o.get("op")).collect(Collectors.toSet()), "no operation outside the crew step: " + ops);
    List<Map<String, Object>> threads = (List<Map<String, Object>>) json.get("crew_step_threads");
    assertEquals(2, threads.size());
    for (Map<String, Object> t : threads) {
      assertTrue((double) t.get("forward_ms_per_step") > 0, t.toString());
      assertTrue((double) t.get("weight_gradients_ms_per_step") > 0, t.toString());
      assertTrue((double) t.get("input_gradients_ms_per_step") > 0, t.toString());
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void aProfileThatLeavesTheFirstStepsOutCountsOnlyTheStepsAfterThemAndTrainsTheSameModel() {
    SingleProcessTraining.Result one = train("sgd", 1);
    TimedBackend timed = TimedBackend.wrap(CpuBackend.create(2));
    SingleProcessTraining.Result profiled = train("sgd", timed, 12);
    assertEquals(one.finalLoss(), profiled.finalLoss());
    assertEquals(30, profiled.steps());
    Map<String, Object> json = profiled.profile().json();
    assertEquals(18L, json.get("steps"));
    assertEquals(12L, json.get("skipped_steps"));
    assertEquals(18, timed.crewPhases().steps(), "the crew's phases of the profiled steps only");
    List<Map<String, Object>> ops = (List<Map<String, Object>>) json.get("ops");
    Map<String, Long> calls =
        ops.stream().collect(Collectors.toMap(o -> (String) o.get("op"), o -> (Long) o.get("calls")));
    assertEquals(Map.of("crew step", 18L, "optimizer", 18L * 6, "data", 18L, "other", 18L), calls);
    assertTrue(profiled.profile().lines().get(0).startsWith("profile single process: 18 steps after the first 12, "),
        profiled.profile().lines().get(0));

    // One thread: each operation once per profiled step.
    TimedBackend single = TimedBackend.wrap(CpuBackend.create(1));
    train("sgd", single, 25);
    TimedBackend.OpTime firstLayer = single.snapshot().stream()
        .filter(op -> op.op().equals("gemm+bias+relu 64x300x300")).findFirst().orElseThrow();
    assertEquals(5, firstLayer.calls(), firstLayer.toString());

    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> train("sgd", TimedBackend.wrap(CpuBackend.create(1)), 30));
    assertEquals("leaving the first 30 steps out of the profile leaves none of the run's 30 to profile",
        none.getMessage());
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithSgd() {
    twoThreadsTrainTheModelOfOne("sgd");
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithAdam() {
    twoThreadsTrainTheModelOfOne("adam");
  }

  @Test
  void twoComputeThreadsTrainTheBitsOfOneWithLarsWhichUpdatesWholeBlocks() {
    twoThreadsTrainTheModelOfOne("lars");
  }
}
