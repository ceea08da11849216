package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExperimentReportTest {
  @TempDir Path dir;

  private static ExperimentReport.Run run(String mode, int trainers, int ps, double samplesPerSec, long bytesSent,
      double... accuracies) {
    List<MetricsLog.Evaluation> evals = new java.util.ArrayList<>();
    for (int i = 0; i < accuracies.length; i++) evals.add(new MetricsLog.Evaluation(1.5 * (i + 1), 10L * (i + 1),
        accuracies[i]));
    return new ExperimentReport.Run(mode, trainers, ps, 100, 6400L * trainers, samplesPerSec, samplesPerSec, 9.0,
        accuracies[accuracies.length - 1], 0.25, bytesSent, evals, List.of(new MetricsLog.LossPoint(10, 0.5)));
  }

  private static Map<String, Object> setup() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("dataset", "mnist");
    m.put("hidden", new int[] {128});
    return m;
  }

  @Test
  void eachRowHasItsRatioToTheSingleProcessTimeToTargetOrNotReachedAndBytesPerSample() {
    List<ExperimentReport.Run> runs = List.of(
        run("single", 1, 0, 1000, 0, 0.80, 0.96),
        run("sync", 2, 1, 500, 64_000, 0.90, 0.93),
        run("async", 2, 1, 2000, 12_800, 0.95, 0.97));
    String md = new ExperimentReport("t", setup(), 0.95, runs, null).markdown();
    assertTrue(md.contains("| single | 1 | 0 | 1000 | 1.00 | 3.00 | 0.9600 | 0.2500 | 0 |"), md);
    // 64,000 bytes over 12,800 samples.
    assertTrue(md.contains("| sync | 2 | 1 | 500 | 0.50 | not reached | 0.9300 | 0.2500 | 5 |"), md);
    assertTrue(md.contains("| async | 2 | 1 | 2000 | 2.00 | 1.50 | 0.9700 | 0.2500 | 1 |"), md);
    assertTrue(md.contains("Setup: dataset mnist; hidden [128]."), md);
    assertTrue(md.contains("time to 95.0% accuracy (s)"), md);
  }

  @Test
  void aRunWithoutABaselineRowSaysSoAndAFasterOneIsOk() throws IOException {
    Path old = dir.resolve("old.json");
    Files.writeString(old, "{\"runs\": [{\"mode\": \"single\", \"trainers\": 1, \"ps\": 0, "
        + "\"samples_per_sec\": 800, \"test_accuracy\": 0.96}]}");
    Baseline baseline = Baseline.load(old);
    List<ExperimentReport.Run> runs = List.of(run("single", 1, 0, 1000, 0, 0.96), run("sync", 2, 1, 500, 0, 0.9));
    List<Baseline.Comparison> comparisons = Arrays.asList(
        baseline.compare("single", 1, 0, 1000, 0.96, 10, 0.01), baseline.compare("sync", 2, 1, 500, 0.9, 10, 0.01));
    assertEquals(25.0, comparisons.get(0).speedChangePct(), 1e-9);
    var check = new ExperimentReport.BaselineCheck(baseline, 10, 0.01, comparisons);
    ExperimentReport report = new ExperimentReport("t", setup(), 0.95, runs, check);
    String md = report.markdown();
    assertTrue(md.contains("| ok: samples/s +25.0%, accuracy +0.0000 |"), md);
    assertTrue(md.contains("| no baseline run |"), md);
    assertTrue(md.contains("No regression."), md);
    report.write(dir.resolve("out"));
    String json = Files.readString(dir.resolve("out").resolve(ExperimentReport.JSON));
    assertTrue(json.contains("\"found\": false"), json);
    assertTrue(json.contains("\"regressions\": 0"), json);
  }

  @Test
  void theSingleProcessMustComeFirst() {
    var e = assertThrows(IllegalArgumentException.class, () -> new ExperimentReport("t", setup(), 0.95,
        List.of(run("sync", 1, 1, 1, 0, 0.5)), null));
    assertEquals("an experiment's first run is the single process", e.getMessage());
  }
}
