package io.shardtrain.samples.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.Writer;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongSupplier;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Per-step training metrics of a run: every trainer step (loss, examples) and every test-set
 * evaluation, written as a CSV and drawn as a PNG (loss and test accuracy over trainer steps).
 * Thread-safe: trainers and the evaluator add rows concurrently.
 */
public final class MetricsLog {
  private record Row(double seconds, String trainer, long step, long stepsDone, int examples, double loss,
      double accuracy, double auc) {}

  private final List<Row> rows = new ArrayList<>();
  private final LongSupplier compileMillis;
  private final LongSupplier processCpuNanos;
  private final LongSupplier jitCpuNanos;
  private long stepsDone;
  /** The counters' places in {@link #atFirst} and {@link #atLast}. */
  private static final int COMPILE_MS = 0;
  private static final int PROCESS_CPU_NS = 1;
  private static final int JIT_CPU_NS = 2;
  /** Each counter (-1: not counted) as the first and the last step read it. */
  private final long[] atFirst = {-1, -1, -1};
  private final long[] atLast = {-1, -1, -1};

  /** A log that reads the JIT's compile time and the CPU times from this JVM, where it tells them. */
  public MetricsLog() {
    this(jvmCompileMillis(), JvmCpu::processNanos, jvmCompilerNanos());
  }

  /** A log that reads the JIT's total compile time in ms from {@code compileMillis} (-1: not counted), and no CPU times. */
  public MetricsLog(LongSupplier compileMillis) {
    this(compileMillis, () -> -1, () -> -1);
  }

  /**
   * A log that reads the JIT's total compile time in ms, the process's CPU time and the JIT compiler
   * threads' CPU time in ns from these counters (each -1: not counted) at every step.
   */
  public MetricsLog(LongSupplier compileMillis, LongSupplier processCpuNanos, LongSupplier jitCpuNanos) {
    this.compileMillis = compileMillis;
    this.processCpuNanos = processCpuNanos;
    this.jitCpuNanos = jitCpuNanos;
  }

  public synchronized void step(double seconds, String trainer, long step, int examples, double loss) {
    stepsDone++;
    rows.add(new Row(seconds, trainer, step, stepsDone, examples, loss, Double.NaN, Double.NaN));
    atLast[COMPILE_MS] = compileMillis.getAsLong();
    atLast[PROCESS_CPU_NS] = processCpuNanos.getAsLong();
    atLast[JIT_CPU_NS] = jitCpuNanos.getAsLong();
    if (stepsDone == 1) System.arraycopy(atLast, 0, atFirst, 0, atLast.length);
  }

  /**
   * Seconds the JIT's compilations took from the first trainer step to the last, start to end,
   * summed over its compiler threads: more than their CPU time ({@link #jitCpuSecondsWhileTraining})
   * when they waited for a core. NaN when the JVM does not count compile time or there were fewer
   * than two steps.
   */
  public synchronized double jitSecondsWhileTraining() {
    return change(COMPILE_MS, 1e3);
  }

  /** This process's CPU seconds, all threads, from the first trainer step to the last; NaN as {@link #jitSecondsWhileTraining}. */
  public synchronized double processCpuSecondsWhileTraining() {
    return change(PROCESS_CPU_NS, 1e9);
  }

  /**
   * The JIT compiler threads' CPU seconds from the first trainer step to the last: what compiling
   * took from the cores training shares (a short run's whole-run rate pays for it); NaN where the OS
   * does not tell (see {@link JvmCpu}) or with fewer than two steps.
   */
  public synchronized double jitCpuSecondsWhileTraining() {
    return change(JIT_CPU_NS, 1e9);
  }

  private double change(int counter, double perSecond) {
    if (stepsDone < 2 || atFirst[counter] < 0 || atLast[counter] < 0) return Double.NaN;
    return (atLast[counter] - atFirst[counter]) / perSecond;
  }

  /** The compiler threads' CPU clock, their files found now rather than in the first step. */
  private static LongSupplier jvmCompilerNanos() {
    JvmCpu.compilerNanos();
    return JvmCpu::compilerNanos;
  }

  private static LongSupplier jvmCompileMillis() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) return () -> -1;
    return jit::getTotalCompilationTime;
  }

  public synchronized void evaluation(double seconds, long stepsDone, double accuracy) {
    addEvaluation(new Row(seconds, "", -1, stepsDone, 0, Double.NaN, accuracy, Double.NaN));
  }

  /** A test-set evaluation of a click model: its AUC (the CSV's test_auc column; accuracy stays blank). */
  public synchronized void aucEvaluation(double seconds, long stepsDone, double auc) {
    addEvaluation(new Row(seconds, "", -1, stepsDone, 0, Double.NaN, Double.NaN, auc));
  }

  /**
   * An evaluation row; it replaces one of the same step count: a run's final evaluation, of the
   * model after its last push, supersedes the periodic one its last step asked for.
   */
  private void addEvaluation(Row row) {
    rows.removeIf(r -> r.step() < 0 && r.stepsDone() == row.stepsDone());
    rows.add(row);
  }

  /** A test-set evaluation: seconds since training began, trainer steps done by then, accuracy. */
  public record Evaluation(double seconds, long stepsDone, double accuracy) {}

  /** The training loss, the mean of the last {@link #LOSS_WINDOW} steps, after {@code stepsDone} trainer steps. */
  public record LossPoint(long stepsDone, double loss) {}

  static final int LOSS_WINDOW = 50;

  /** Every evaluation, in the order they ended. */
  public synchronized List<Evaluation> evaluations() {
    List<Evaluation> list = new ArrayList<>();
    for (Row r : rows) {
      if (!Double.isNaN(r.accuracy())) list.add(new Evaluation(r.seconds(), r.stepsDone(), r.accuracy()));
    }
    return list;
  }

  /** The smoothed training loss after every 10th trainer step. */
  public synchronized List<LossPoint> smoothedLoss() {
    List<LossPoint> points = new ArrayList<>();
    double window = 0;
    int n = 0;
    double[] last = new double[LOSS_WINDOW];
    for (Row r : rows) {
      if (Double.isNaN(r.loss())) continue;
      window += r.loss() - last[n % LOSS_WINDOW];
      last[n % LOSS_WINDOW] = r.loss();
      n++;
      if (n % 10 == 0) points.add(new LossPoint(r.stepsDone(), window / Math.min(n, LOSS_WINDOW)));
    }
    return points;
  }

  /** The mean loss of the last {@link #LOSS_WINDOW} trainer steps (fewer if there were fewer), NaN with none. */
  public synchronized double recentLoss() {
    double sum = 0;
    int n = 0;
    for (int i = rows.size() - 1; i >= 0 && n < LOSS_WINDOW; i--) {
      double loss = rows.get(i).loss();
      if (Double.isNaN(loss)) continue;
      sum += loss;
      n++;
    }
    return n == 0 ? Double.NaN : sum / n;
  }

  /**
   * Samples per second over the second half of the run's training examples: the rate once the JIT
   * has compiled the hot paths, which a short run's whole-run rate hides. NaN with fewer than two steps.
   */
  public synchronized double secondHalfSamplesPerSec() {
    List<Row> steps = new ArrayList<>();
    long total = 0;
    for (Row r : rows) {
      if (r.examples() > 0) {
        steps.add(r);
        total += r.examples();
      }
    }
    steps.sort(java.util.Comparator.comparingDouble(Row::seconds));
    long seen = 0;
    for (int i = 0; i < steps.size() - 1; i++) {
      seen += steps.get(i).examples();
      if (2 * seen >= total) {
        double seconds = steps.get(steps.size() - 1).seconds() - steps.get(i).seconds();
        return seconds > 0 ? (total - seen) / seconds : Double.NaN;
      }
    }
    return Double.NaN;
  }

  /** Columns: time_s, trainer, step, trainer_steps_done, examples, loss, test_accuracy, test_auc (blank when absent). */
  public synchronized void writeCsv(Path file) throws IOException {
    try (Writer w = Files.newBufferedWriter(file)) {
      w.write("time_s,trainer,step,trainer_steps_done,examples,loss,test_accuracy,test_auc\n");
      for (Row r : rows) {
        w.write(String.format(Locale.ROOT, "%.4f,%s,%s,%d,%s,%s,%s,%s%n", r.seconds(), r.trainer(),
            r.step() < 0 ? "" : Long.toString(r.step()), r.stepsDone(),
            r.examples() == 0 ? "" : Integer.toString(r.examples()),
            Double.isNaN(r.loss()) ? "" : String.format(Locale.ROOT, "%.6f", r.loss()),
            Double.isNaN(r.accuracy()) ? "" : String.format(Locale.ROOT, "%.5f", r.accuracy()),
            Double.isNaN(r.auc()) ? "" : String.format(Locale.ROOT, "%.5f", r.auc())));
      }
    }
  }

  /** Loss (smoothed over 50 steps) and test accuracy against trainer steps done. */
  public synchronized void writePng(Path file, String title) throws IOException {
    XYSeries loss = new XYSeries("training loss (mean of 50 steps)");
    XYSeries acc = new XYSeries("test accuracy");
    for (LossPoint p : smoothedLoss()) loss.add(p.stepsDone(), p.loss());
    for (Evaluation e : evaluations()) acc.add(e.stepsDone(), e.accuracy());
    XYPlot plot = new XYPlot();
    plot.setDomainAxis(new NumberAxis("trainer steps"));
    plot.setDataset(0, new XYSeriesCollection(loss));
    plot.setRangeAxis(0, new NumberAxis("loss"));
    XYLineAndShapeRenderer lossRenderer = new XYLineAndShapeRenderer(true, false);
    lossRenderer.setSeriesPaint(0, new Color(0x1f77b4));
    lossRenderer.setSeriesStroke(0, new BasicStroke(1.5f));
    plot.setRenderer(0, lossRenderer);
    NumberAxis accAxis = new NumberAxis("test accuracy");
    accAxis.setAutoRangeIncludesZero(false);
    plot.setDataset(1, new XYSeriesCollection(acc));
    plot.setRangeAxis(1, accAxis);
    plot.mapDatasetToRangeAxis(1, 1);
    XYLineAndShapeRenderer accRenderer = new XYLineAndShapeRenderer(true, true);
    accRenderer.setSeriesPaint(0, new Color(0xd62728));
    plot.setRenderer(1, accRenderer);
    Charts.savePng(file, title, plot);
  }
}
