package io.shardtrain.samples.report;

import io.shardtrain.bench.Median;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The run-to-run spread of each figure over several {@code bench suite} runs on one machine: what a
 * tolerance must stay above so that noise alone marks no regression. A figure's spread is
 * (max - min) / median, in percent, over the runs that measured it; its worst change is what
 * {@link SuiteBaseline} would call the change had the best run been the baseline of the worst:
 * (max - min) / max where higher is better, (max - min) / min where lower is.
 */
public final class SuiteSpread {
  /** One figure over the runs. */
  public record Row(String name, String unit, boolean higherIsBetter, double min, double median, double max,
      int runs) {
    public double spreadPct() {
      return median != 0 ? 100 * (max - min) / Math.abs(median) : Double.NaN;
    }

    /** The largest change the worse way between two of the runs, in percent of the better one. */
    public double worstChangePct() {
      double best = higherIsBetter ? max : min;
      return best != 0 ? 100 * (max - min) / Math.abs(best) : Double.NaN;
    }
  }

  private final List<Row> rows;

  private SuiteSpread(List<Row> rows) {
    this.rows = List.copyOf(rows);
  }

  /** The figures of the first run, each over every run that has a value for it. */
  public static SuiteSpread of(List<SuiteBaseline> runs) {
    if (runs.size() < 2) throw new IllegalArgumentException("a spread needs at least 2 runs, got " + runs.size());
    List<Row> rows = new ArrayList<>();
    for (String name : runs.get(0).values().keySet()) {
      double[] v = runs.stream().map(r -> r.values().get(name)).filter(x -> x != null && Double.isFinite(x))
          .mapToDouble(Double::doubleValue).sorted().toArray();
      if (v.length == 0) continue;
      double median = Median.ofSorted(v, v.length);
      rows.add(new Row(name, runs.get(0).unit(name), runs.get(0).higherIsBetter(name), v[0], median,
          v[v.length - 1], v.length));
    }
    return new SuiteSpread(rows);
  }

  public List<Row> rows() {
    return rows;
  }

  /** A markdown table, one row per figure, in the first run's order. */
  public String markdown() {
    StringBuilder sb = new StringBuilder("| figure | unit | runs | min | median | max | spread (max-min)/median "
        + "| worst change between two runs |\n");
    sb.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      sb.append("| ").append(r.name()).append(" | ").append(r.unit()).append(" | ").append(r.runs()).append(" | ")
          .append(SuiteReport.number(r.min())).append(" | ").append(SuiteReport.number(r.median())).append(" | ")
          .append(SuiteReport.number(r.max())).append(" | ")
          .append(pct(r.spreadPct())).append(" | ").append(Double.isNaN(r.worstChangePct()) ? "n/a"
              : String.format(Locale.ROOT, "%+.1f%%", r.higherIsBetter() ? -r.worstChangePct() : r.worstChangePct()))
          .append(" |\n");
    }
    return sb.toString();
  }

  private static String pct(double v) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", v);
  }
}
