package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsLogTest {

  /** Two trainers, 64 examples a step: slow first half (JIT warm-up), then 0.01 s per step pair. */
  @Test
  void secondHalfRateCountsOnlyTheStepsAfterHalfTheExamples() {
    MetricsLog log = new MetricsLog();
    double t = 0;
    for (int step = 1; step <= 10; step++) {
      t += step <= 5 ? 0.1 : 0.01;
      log.step(t, "trainer-1", step, 64, 1.0);
      log.step(t, "trainer-2", step, 64, 1.0);
      if (step == 5) log.evaluation(t, 10, 0.9);
    }
    // Half the 1280 examples are in by step 5 (t = 0.5); the 5 step pairs after it take 0.05 s.
    assertEquals(640 / 0.05, log.secondHalfSamplesPerSec(), 1e-6);
  }

  /** The compile-time counter as each step reads it: 400 ms at the first, 1,300 at the last. */
  @Test
  void jitSecondsCountTheCompileTimeFromTheFirstStepToTheLast() {
    long[] readings = {400, 700, 1300};
    int[] next = {0};
    MetricsLog log = new MetricsLog(() -> readings[next[0]++]);
    log.step(0.1, "trainer-1", 1, 64, 1.0);
    log.step(0.2, "trainer-2", 1, 64, 1.0);
    log.evaluation(0.25, 2, 0.9);
    log.step(0.3, "trainer-1", 2, 64, 1.0);
    assertEquals(0.9, log.jitSecondsWhileTraining(), 1e-9);
  }

  @Test
  void jitSecondsAreNaNWhenTheJvmDoesNotCountCompileTimeOrWithOneStep() {
    MetricsLog uncounted = new MetricsLog(() -> -1);
    uncounted.step(0.1, "trainer-1", 1, 64, 1.0);
    uncounted.step(0.2, "trainer-1", 2, 64, 1.0);
    assertTrue(Double.isNaN(uncounted.jitSecondsWhileTraining()));
    MetricsLog oneStep = new MetricsLog(() -> 500);
    oneStep.step(0.1, "trainer-1", 1, 64, 1.0);
    assertTrue(Double.isNaN(oneStep.jitSecondsWhileTraining()));
  }

  /** Each counter as each step reads it: the change from the first step to the last, whatever came between. */
  @Test
  void cpuSecondsCountTheProcessAndTheCompilerThreadsFromTheFirstStepToTheLast() {
    long[] process = {2_000_000_000L, 2_500_000_000L, 5_250_000_000L};
    long[] compilers = {300_000_000L, 900_000_000L, 1_050_000_000L};
    int[] p = {0};
    int[] c = {0};
    MetricsLog log = new MetricsLog(() -> 0, () -> process[p[0]++], () -> compilers[c[0]++]);
    log.step(0.1, "trainer-1", 1, 64, 1.0);
    log.step(0.2, "trainer-2", 1, 64, 1.0);
    log.step(0.3, "trainer-1", 2, 64, 1.0);
    assertEquals(3.25, log.processCpuSecondsWhileTraining(), 1e-9);
    assertEquals(0.75, log.jitCpuSecondsWhileTraining(), 1e-9);
  }

  @Test
  void cpuSecondsAreNaNWhereTheyAreNotCounted() {
    MetricsLog log = new MetricsLog(() -> 0, () -> -1, () -> -1);
    log.step(0.1, "trainer-1", 1, 64, 1.0);
    log.step(0.2, "trainer-1", 2, 64, 1.0);
    assertTrue(Double.isNaN(log.processCpuSecondsWhileTraining()));
    assertTrue(Double.isNaN(log.jitCpuSecondsWhileTraining()));
  }

  @Test
  void secondHalfRateIsNaNWithoutTwoSteps() {
    MetricsLog log = new MetricsLog();
    assertTrue(Double.isNaN(log.secondHalfSamplesPerSec()));
    log.step(0.1, "trainer-1", 1, 64, 1.0);
    assertTrue(Double.isNaN(log.secondHalfSamplesPerSec()));
  }

  @Test
  void aSecondEvaluationAtTheSameStepCountReplacesTheFirst(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    MetricsLog log = new MetricsLog();
    log.step(0.1, "trainer-1", 1, 32, 2.0);
    log.evaluation(0.2, 1, 0.50);
    log.step(0.3, "trainer-1", 2, 32, 1.5);
    log.evaluation(0.4, 2, 0.60);
    log.evaluation(0.5, 2, 0.70);
    assertEquals(List.of(new MetricsLog.Evaluation(0.2, 1, 0.50), new MetricsLog.Evaluation(0.5, 2, 0.70)),
        log.evaluations());
    java.nio.file.Path csv = dir.resolve("m.csv");
    log.writeCsv(csv);
    assertEquals(5, java.nio.file.Files.readAllLines(csv).size()); // header, two steps, two evaluations
  }
}
