package io.shardtrain.samples.report;

import java.awt.BasicStroke;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * What {@code shardtrain experiment} writes of its runs: {@code report.md} (a table of the runs and
 * the charts), {@code results.json} (every figure, and the evaluations and loss curve of each run)
 * and three PNG charts: test accuracy against wall time, samples/s against trainers, and training
 * loss against step. The first run is the single process, the base of every run's ratio.
 */
public final class ExperimentReport {
  public static final String MARKDOWN = "report.md";
  public static final String JSON = "results.json";
  public static final String ACCURACY_CHART = "accuracy-vs-time.png";
  public static final String THROUGHPUT_CHART = "samples-per-sec-vs-trainers.png";
  public static final String LOSS_CHART = "loss-vs-step.png";

  /**
   * One run of the matrix. {@code ps}: parameter-server nodes, 0 for the single process;
   * {@code steps}: per trainer; {@code samplesPerSecSecondHalf}: over the second half of the
   * samples, after the JIT's warm-up ({@link MetricsLog#secondHalfSamplesPerSec}); {@code finalLoss}: the mean of the last 50 trainer steps' losses;
   * {@code bytesSent}: by every node while the trainers ran;
   * {@code evaluations}' seconds count from the start of training; {@code loss}'s steps are trainer
   * steps of all trainers together.
   */
  public record Run(String mode, int trainers, int ps, long steps, long samples, double samplesPerSec,
      double samplesPerSecSecondHalf, double wallSeconds, double testAccuracy, double finalLoss, long bytesSent,
      List<MetricsLog.Evaluation> evaluations, List<MetricsLog.LossPoint> loss) {
    public String label() {
      return mode.equals("single") ? "single process" : mode + " x" + trainers;
    }

    public double bytesPerSample() {
      return samples > 0 ? (double) bytesSent / samples : 0;
    }

    /** Seconds into training of the first evaluation at or above {@code target}, or NaN. */
    public double secondsTo(double target) {
      for (MetricsLog.Evaluation e : evaluations) {
        if (e.accuracy() >= target) return e.seconds();
      }
      return Double.NaN;
    }
  }

  /** The baseline the runs were compared with, its thresholds, and each run's comparison (null: no row). */
  public record BaselineCheck(Baseline baseline, double slowerPct, double accuracyTolerance,
      List<Baseline.Comparison> comparisons) {
    public long regressions() {
      return comparisons.stream().filter(c -> c != null && c.regressed()).count();
    }
  }

  private final String title;
  private final Map<String, Object> setup;
  private final double targetAccuracy;
  private final List<Run> runs;
  private final BaselineCheck check;

  /**
   * {@code setup}: how every run was set up (flags and settings, for the report's header);
   * {@code runs}: the single process first; {@code check}: null without a baseline.
   */
  public ExperimentReport(String title, Map<String, Object> setup, double targetAccuracy, List<Run> runs,
      BaselineCheck check) {
    if (runs.isEmpty() || !runs.get(0).mode().equals("single")) {
      throw new IllegalArgumentException("an experiment's first run is the single process");
    }
    this.title = title;
    this.setup = setup;
    this.targetAccuracy = targetAccuracy;
    this.runs = List.copyOf(runs);
    this.check = check;
  }

  /** A run's samples/s over the single process's. */
  public double ratio(Run run) {
    double base = runs.get(0).samplesPerSec();
    return base > 0 ? run.samplesPerSec() / base : 0;
  }

  /** Writes the markdown report, the JSON results and the charts into {@code dir}. */
  public void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(JSON), Json.write(json()));
    writeAccuracyChart(dir.resolve(ACCURACY_CHART));
    writeThroughputChart(dir.resolve(THROUGHPUT_CHART));
    writeLossChart(dir.resolve(LOSS_CHART));
    Files.writeString(dir.resolve(MARKDOWN), markdown());
  }

  String markdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("# ").append(title).append("\n\n");
    sb.append("Every row is one run, one after another on this machine, each as `shardtrain local` runs it with "
        + "the same flags; the single process is the base of the ratio. Bytes sent: by every node while the "
        + "trainers ran (serialized data-path messages and bulk frames). Final loss: the mean training loss of the last "
        + MetricsLog.LOSS_WINDOW + " trainer steps. Time to reach the target: seconds from "
        + "the start of training to the first test-set evaluation at or above it.\n\n");
    sb.append("Setup:");
    setup.forEach((k, v) -> sb.append(' ').append(k).append(' ').append(v instanceof int[] a
        ? java.util.Arrays.toString(a) : v).append(';'));
    sb.setLength(sb.length() - 1);
    sb.append(".\n\n");
    String target = String.format(Locale.ROOT, "%.1f%%", 100 * targetAccuracy);
    sb.append("| mode | trainers | ps nodes | samples/s | ratio to single | time to ").append(target)
        .append(" accuracy (s) | final accuracy | final loss | bytes sent per sample |");
    if (check != null) sb.append(" against baseline |");
    sb.append('\n');
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    if (check != null) sb.append("---|");
    sb.append('\n');
    for (int i = 0; i < runs.size(); i++) {
      Run r = runs.get(i);
      double toTarget = r.secondsTo(targetAccuracy);
      sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %.0f | %.2f | %s | %.4f | %.4f | %.0f |", r.mode(),
          r.trainers(), r.ps(), r.samplesPerSec(), ratio(r),
          Double.isNaN(toTarget) ? "not reached" : String.format(Locale.ROOT, "%.2f", toTarget),
          r.testAccuracy(), r.finalLoss(), r.bytesPerSample()));
      if (check != null) sb.append(' ').append(against(check.comparisons().get(i))).append(" |");
      sb.append('\n');
    }
    if (check != null) {
      sb.append(String.format(Locale.ROOT, "%nBaseline: `%s`. A regression is samples/s lower by more than %.1f%% "
          + "or test accuracy lower by more than %.4f than the baseline's run of the same mode, trainers and ps "
          + "nodes. ", check.baseline().file(), check.slowerPct(), check.accuracyTolerance()));
      long n = check.regressions();
      sb.append(n == 0 ? "No regression.\n" : "**" + n + (n == 1 ? " regression" : " regressions") + "**:\n\n");
      for (int i = 0; i < runs.size(); i++) {
        Baseline.Comparison c = check.comparisons().get(i);
        if (c != null && c.regressed()) {
          sb.append("- ").append(runs.get(i).label()).append(": ").append(String.join("; ", c.regressions()))
              .append('\n');
        }
      }
    }
    sb.append("\n## Charts\n\n");
    sb.append("![Test accuracy against wall time](").append(ACCURACY_CHART).append(")\n\n");
    sb.append("![Samples per second against trainers](").append(THROUGHPUT_CHART).append(")\n\n");
    sb.append("![Training loss against step](").append(LOSS_CHART).append(")\n");
    return sb.toString();
  }

  private static String against(Baseline.Comparison c) {
    if (c == null) return "no baseline run";
    String figures = String.format(Locale.ROOT, "samples/s %+.1f%%, accuracy %+.4f", c.speedChangePct(),
        c.accuracyChange());
    return c.regressed() ? "**REGRESSION**: " + figures : "ok: " + figures;
  }

  Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("title", title);
    m.put("setup", setup);
    m.put("target_accuracy", targetAccuracy);
    List<Object> list = new ArrayList<>();
    for (int i = 0; i < runs.size(); i++) {
      Run r = runs.get(i);
      Map<String, Object> j = new LinkedHashMap<>();
      j.put("mode", r.mode());
      j.put("trainers", r.trainers());
      j.put("ps", r.ps());
      j.put("steps", r.steps());
      j.put("samples", r.samples());
      j.put("samples_per_sec", r.samplesPerSec());
      j.put("samples_per_sec_second_half", r.samplesPerSecSecondHalf());
      j.put("ratio_to_single", ratio(r));
      double toTarget = r.secondsTo(targetAccuracy);
      j.put("seconds_to_target", Double.isNaN(toTarget) ? null : toTarget);
      j.put("test_accuracy", r.testAccuracy());
      j.put("final_loss", r.finalLoss());
      j.put("bytes_sent", r.bytesSent());
      j.put("bytes_per_sample", r.bytesPerSample());
      j.put("wall_seconds", r.wallSeconds());
      if (check != null) j.put("baseline", comparisonJson(check.comparisons().get(i)));
      List<Object> evals = new ArrayList<>();
      for (MetricsLog.Evaluation e : r.evaluations()) {
        Map<String, Object> em = new LinkedHashMap<>();
        em.put("seconds", e.seconds());
        em.put("trainer_steps", e.stepsDone());
        em.put("test_accuracy", e.accuracy());
        evals.add(em);
      }
      j.put("evaluations", evals);
      List<Object> loss = new ArrayList<>();
      for (MetricsLog.LossPoint p : r.loss()) loss.add(List.of(p.stepsDone(), p.loss()));
      j.put("loss_by_trainer_steps", loss);
      list.add(j);
    }
    m.put("runs", list);
    if (check != null) {
      Map<String, Object> b = new LinkedHashMap<>();
      b.put("file", check.baseline().file().toString());
      b.put("slower_pct", check.slowerPct());
      b.put("accuracy_tolerance", check.accuracyTolerance());
      b.put("regressions", check.regressions());
      m.put("baseline", b);
    }
    return m;
  }

  private static Map<String, Object> comparisonJson(Baseline.Comparison c) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (c == null) {
      m.put("found", false);
      return m;
    }
    m.put("found", true);
    m.put("samples_per_sec", c.baseline().samplesPerSec());
    m.put("test_accuracy", c.baseline().testAccuracy());
    m.put("samples_per_sec_change_pct", c.speedChangePct());
    m.put("test_accuracy_change", c.accuracyChange());
    m.put("regressed", c.regressed());
    m.put("regressions", c.regressions());
    return m;
  }

  private void writeAccuracyChart(Path file) throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    for (Run r : runs) {
      XYSeries s = new XYSeries(r.label());
      for (MetricsLog.Evaluation e : r.evaluations()) s.add(e.seconds(), e.accuracy());
      data.addSeries(s);
    }
    NumberAxis y = new NumberAxis("test accuracy");
    // A fixed top of 1 and a bottom on a 0.05 step below the lowest: equal accuracies would
    // otherwise make the axis a range of width zero.
    double lowest = runs.stream().flatMap(r -> r.evaluations().stream()).mapToDouble(MetricsLog.Evaluation::accuracy)
        .min().orElse(0);
    y.setRange(Math.max(0, Math.floor(lowest * 20 - 1e-9) / 20 - 0.05), 1.0);
    save(file, "Test accuracy against wall time", new NumberAxis("seconds since training began"), y, data, true);
  }

  private void writeThroughputChart(Path file) throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    Map<String, XYSeries> byMode = new LinkedHashMap<>();
    for (Run r : runs) {
      String name = r.mode().equals("single") ? "single process" : r.mode();
      byMode.computeIfAbsent(name, XYSeries::new).add(r.trainers(), r.samplesPerSec());
    }
    byMode.values().forEach(data::addSeries);
    NumberAxis x = new NumberAxis("trainers");
    x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
    save(file, "Samples per second against trainers", x, new NumberAxis("samples/s"), data, true);
  }

  private void writeLossChart(Path file) throws IOException {
    XYSeriesCollection data = new XYSeriesCollection();
    for (Run r : runs) {
      XYSeries s = new XYSeries(r.label());
      // Per trainer, so runs of every trainer count span the same steps.
      for (MetricsLog.LossPoint p : r.loss()) s.add((double) p.stepsDone() / r.trainers(), p.loss());
      data.addSeries(s);
    }
    save(file, "Training loss (mean of " + MetricsLog.LOSS_WINDOW + " steps) against step",
        new NumberAxis("step (per trainer)"), new NumberAxis("loss"), data, false);
  }

  private static void save(Path file, String title, NumberAxis x, NumberAxis y, XYSeriesCollection data,
      boolean shapes) throws IOException {
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, shapes);
    for (int i = 0; i < data.getSeriesCount(); i++) renderer.setSeriesStroke(i, new BasicStroke(1.5f));
    XYPlot plot = new XYPlot(data, x, y, renderer);
    Charts.savePng(file, title, plot);
  }
}
