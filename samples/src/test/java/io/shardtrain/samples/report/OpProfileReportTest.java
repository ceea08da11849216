package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.shardtrain.compute.backend.CrewStep;
import io.shardtrain.compute.backend.TimedBackend;
import io.shardtrain.compute.backend.TimedBackend.OpTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OpProfileReportTest {
  private static final long MS = 1_000_000;

  private static OpProfileReport report() {
    // 10 steps of 10 ms: 6 ms on the backend, 2 in the optimizer, 1 reading data, 1 left.
    List<OpTime> ops = List.of(
        new OpTime("gemm 64x784x512", 10, 40 * MS, 10 * 2L * 64 * 784 * 512),
        new OpTime("relu 64x512", 10, 5 * MS, 0),
        new OpTime("gemm 784x64x512:tn", 20, 15 * MS, 20 * 2L * 784 * 64 * 512));
    return new OpProfileReport(10, 0, 100 * MS, ops, null, 40, 20 * MS, 15 * MS);
  }

  @Test
  void printsTheTotalThenEveryPartLongestFirstWithCallsPerStepAndGemmRates() {
    assertEquals(List.of(
        "profile single process: 10 steps, 10.000 ms per step = backend operations 6.000 (60.0%) + optimizer 2.000"
            + " (20.0%) + data 1.500 (15.0%) + other 0.500 (5.0%)",
        "profile   gemm 64x784x512: 4.000 ms (40.0%), 1 call per step, 12.8 GFLOP/s",
        "profile   optimizer: 2.000 ms (20.0%), 4 calls per step",
        "profile   gemm 784x64x512:tn: 1.500 ms (15.0%), 2 calls per step, 68.5 GFLOP/s",
        "profile   data: 1.500 ms (15.0%), 1 call per step",
        "profile   relu 64x512: 0.500 ms (5.0%), 1 call per step",
        "profile   other: 0.500 ms (5.0%)"),
        report().lines());
  }

  @Test
  @SuppressWarnings("unchecked")
  void aParallelProductsLineAndJsonSplitItsRunsPerStep() {
    List<OpTime> ops = List.of(new OpTime("gemm 64x784x512", 10, 40 * MS, 10 * 2L * 64 * 784 * 512,
        new TimedBackend.Slices(20, 30 * MS, 36 * MS, 2 * MS, 9 * MS)));
    OpProfileReport r = new OpProfileReport(10, 0, 100 * MS, ops, null, 40, 20 * MS, 15 * MS);
    assertEquals("profile   gemm 64x784x512: 4.000 ms (40.0%), 1 call per step, 12.8 GFLOP/s; in parallel: 2 runs per"
        + " step, caller 3.000 ms, workers 3.600 ms, hand-offs 0.200 ms, caller waited 0.900 ms", r.lines().get(1));
    Map<String, Object> gemm = ((List<Map<String, Object>>) r.json().get("ops")).get(0);
    assertEquals(Map.of("runs_per_step", 2.0, "caller_ms_per_step", 3.0, "workers_ms_per_step", 3.6,
        "handoffs_ms_per_step", 0.2, "caller_waited_ms_per_step", 0.9), gemm.get("parallel"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void aCrewStepIsOnePartOfTheBackendFollowedByEachThreadsPhases() {
    // 10 steps of 10 ms, the crew step 7 ms of each; phases: start, read, forward, sums, output, weight gradients,
    // input gradients, gather, meetings.
    long[][] nanos = {
        {0, 2 * MS, 20 * MS, 3 * MS, 2 * MS, 25 * MS, 10 * MS, 1 * MS, 4 * MS},
        {1 * MS, 3 * MS, 22 * MS, 2 * MS, 2 * MS, 24 * MS, 12 * MS, 1 * MS, 2 * MS}};
    // Two of thread 0's waits were stalls, 1.5 ms each.
    CrewStep.PhaseTimes crew = new CrewStep.PhaseTimes(10, 70 * MS, nanos, new long[] {2, 0}, new long[] {3 * MS, 0});
    OpProfileReport r = new OpProfileReport(10, 0, 100 * MS, List.of(), crew, 40, 20 * MS, 5 * MS);
    assertEquals(List.of(
        "profile single process: 10 steps, 10.000 ms per step = backend operations 7.000 (70.0%) + optimizer 2.000"
            + " (20.0%) + data 0.500 (5.0%) + other 0.500 (5.0%)",
        "profile   crew step: 7.000 ms (70.0%), 1 call per step",
        "profile   optimizer: 2.000 ms (20.0%), 4 calls per step",
        "profile   data: 0.500 ms (5.0%), 1 call per step",
        "profile   other: 0.500 ms (5.0%)",
        "profile   crew step, thread 0, ms per step: start 0.000, read 0.200, forward 2.000, sums 0.300,"
            + " output 0.200, weight_gradients 2.500, input_gradients 1.000, gather 0.100, meetings 0.400;"
            + " of its waits, 2 stalls of 0.5 ms or more, 0.300 ms per step",
        "profile   crew step, thread 1, ms per step: start 0.100, read 0.300, forward 2.200, sums 0.200,"
            + " output 0.200, weight_gradients 2.400, input_gradients 1.200, gather 0.100, meetings 0.200;"
            + " of its waits, 0 stalls of 0.5 ms or more, 0.000 ms per step"),
        r.lines());
    List<Map<String, Object>> threads = (List<Map<String, Object>>) r.json().get("crew_step_threads");
    assertEquals(2, threads.size());
    assertEquals(1, threads.get(1).get("thread"));
    assertEquals(2.4, (double) threads.get(1).get("weight_gradients_ms_per_step"), 1e-12);
    assertEquals(1.2, (double) threads.get(1).get("input_gradients_ms_per_step"), 1e-12);
    assertEquals(2L, threads.get(0).get("stalls"));
    assertEquals(0.3, (double) threads.get(0).get("stalls_ms_per_step"), 1e-12);
    assertEquals(7.0, (double) r.json().get("backend_ms_per_step"), 1e-12);
  }

  @Test
  @SuppressWarnings("unchecked")
  void theReportsProfileHasEveryPartInNanosecondsAddingUpToTheWallTime() {
    Map<String, Object> json = report().json();
    assertEquals(10L, json.get("steps"));
    assertEquals(100 * MS, json.get("wall_ns"));
    assertEquals(10.0, (double) json.get("ms_per_step"), 1e-12);
    assertEquals(6.0, (double) json.get("backend_ms_per_step"), 1e-12);
    List<Map<String, Object>> ops = (List<Map<String, Object>>) (List<?>) json.get("ops");
    assertEquals(List.of("gemm 64x784x512", "optimizer", "gemm 784x64x512:tn", "data", "relu 64x512", "other"),
        ops.stream().map(o -> o.get("op")).toList());
    long sum = 0;
    for (Map<String, Object> o : ops) sum += (long) o.get("ns");
    assertEquals(100 * MS, sum);
    Map<String, Object> gemm = ops.get(0);
    assertEquals(10L, gemm.get("calls"));
    assertEquals(4.0, (double) gemm.get("ms_per_step"), 1e-12);
    assertEquals(0.4, (double) gemm.get("share"), 1e-12);
    assertEquals(2.0 * 64 * 784 * 512 / 4e6, (double) gemm.get("gflops"), 1e-9);
    assertFalse(ops.get(4).containsKey("gflops"), "relu has no rate: " + ops.get(4));
    assertEquals(5 * MS, ops.get(5).get("ns"));
  }

  @Test
  void aShapeRarerThanOnceInAHundredStepsShowsItsCallCountNotZeroCallsPerStep() {
    // 3000 steps; the epoch's short last batch of 32 examples ran its products once.
    List<OpTime> ops = List.of(
        new OpTime("gemm 64x784x512", 3000, 3000 * MS, 3000 * 2L * 64 * 784 * 512),
        new OpTime("gemm 32x784x512", 1, MS / 2, 2L * 32 * 784 * 512),
        new OpTime("relu 64x512", 6000, 100 * MS, 0));
    List<String> lines = new OpProfileReport(3000, 0, 4000 * MS, ops, null, 3000, 10 * MS, 10 * MS).lines();
    assertEquals(List.of("1 call per step", "2 calls per step", "1 call in 3000 steps"),
        lines.stream().filter(l -> l.contains("gemm 64x784x512") || l.contains("gemm 32x784x512")
            || l.contains("relu")).map(l -> l.replaceAll(".*%\\), ", "").replaceAll(", [0-9.]+ GFLOP/s", "")).toList());
  }
}
