package io.shardtrain.samples.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code bench suite} writes: {@code suite.md}, a table of every figure (and, against a
 * baseline, the baseline's value, the change and a mark on each regression), and
 * {@code suite.json}, the machine, the parameters and every figure, which a later run reads as its
 * baseline ({@link SuiteBaseline}).
 */
public final class SuiteReport {
  public static final String MARKDOWN = "suite.md";
  public static final String JSON = "suite.json";
  /** The mark of a figure that got worse than the tolerance, in suite.md. */
  public static final String WORSE = "**WORSE**";

  private final Map<String, Object> machine;
  private final Map<String, Object> parameters;
  private final List<SuiteFigure> figures;
  private final SuiteBaseline.Check check;

  /** {@code check}: null without a baseline, else the comparison of exactly {@code figures}. */
  public SuiteReport(Map<String, Object> machine, Map<String, Object> parameters, List<SuiteFigure> figures,
      SuiteBaseline.Check check) {
    this.machine = machine;
    this.parameters = parameters;
    this.figures = List.copyOf(figures);
    this.check = check;
  }

  public void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(JSON), Json.write(json()));
    Files.writeString(dir.resolve(MARKDOWN), markdown());
  }

  String markdown() {
    StringBuilder sb = new StringBuilder("# Benchmark suite\n\n");
    sb.append("Every figure comes from this run of `bin/shardtrain bench suite`, its parts one after another in "
        + "one JVM.\n\nMachine:");
    facts(sb, machine);
    sb.append("\n\nParameters:");
    facts(sb, parameters);
    sb.append("\n\n| figure | value | unit |");
    if (check != null) sb.append(" baseline | change | |");
    sb.append("\n|---|---:|---|");
    if (check != null) sb.append("---:|---:|---|");
    sb.append('\n');
    for (int i = 0; i < figures.size(); i++) {
      SuiteFigure f = figures.get(i);
      sb.append("| ").append(f.name()).append(" | ").append(number(f.value())).append(" | ").append(f.unit())
          .append(f.higherIsBetter() ? " (higher is better)" : " (lower is better)").append(" |");
      if (check != null) {
        SuiteBaseline.Change c = check.changes().get(i);
        if (!c.inBaseline()) {
          sb.append(" | | new |");
        } else {
          sb.append(' ').append(number(c.baseline())).append(" | ")
              .append(Double.isNaN(c.changePct()) ? "" : String.format(Locale.ROOT, "%+.1f%%", c.changePct()))
              .append(" | ").append(c.regressed() ? WORSE : "").append(" |");
        }
      }
      sb.append('\n');
    }
    if (check != null) {
      List<SuiteBaseline.Change> worse = check.regressions();
      sb.append(String.format(Locale.ROOT, "%nBaseline: `%s`. %s marks a figure that moved the worse way by more "
          + "than the tolerance, in percent of the baseline's value: %.1f%% for timed figures, %.1f%% for seeded ones "
          + "(test accuracy, bytes sent: the seeds set them, not the machine's speed); new: the baseline has no such figure. ",
          check.file(), WORSE, check.tolerancePct(), check.seededTolerancePct()));
      sb.append(worse.isEmpty() ? "No figure regressed.\n"
          : "**" + worse.size() + (worse.size() == 1 ? " figure" : " figures") + " regressed**: "
              + String.join(", ", worse.stream().map(c -> c.figure().name()).toList()) + ".\n");
      if (!check.missing().isEmpty()) {
        sb.append("\nIn the baseline but not measured by this run: ").append(String.join(", ", check.missing()))
            .append(".\n");
      }
    }
    return sb.toString();
  }

  Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("benchmark", "suite");
    m.put("machine", machine);
    m.put("parameters", parameters);
    List<Object> list = new ArrayList<>();
    for (int i = 0; i < figures.size(); i++) {
      SuiteFigure f = figures.get(i);
      Map<String, Object> j = new LinkedHashMap<>();
      j.put("name", f.name());
      j.put("value", f.value());
      j.put("unit", f.unit());
      j.put("higher_is_better", f.higherIsBetter());
      j.put("seeded", f.seeded());
      if (check != null) {
        SuiteBaseline.Change c = check.changes().get(i);
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("found", c.inBaseline());
        if (c.inBaseline()) {
          b.put("value", c.baseline());
          b.put("change_pct", c.changePct());
          b.put("regressed", c.regressed());
        }
        j.put("baseline", b);
      }
      list.add(j);
    }
    m.put("figures", list);
    if (check != null) {
      Map<String, Object> b = new LinkedHashMap<>();
      b.put("file", check.file().toString());
      b.put("tolerance_pct", check.tolerancePct());
      b.put("seeded_tolerance_pct", check.seededTolerancePct());
      b.put("regressions", check.regressions().size());
      b.put("regressed", check.regressions().stream().map(c -> c.figure().name()).toList());
      b.put("missing", check.missing());
      m.put("baseline", b);
    }
    return m;
  }

  private static void facts(StringBuilder sb, Map<String, Object> m) {
    m.forEach((k, v) -> sb.append(' ').append(k).append(' ').append(v instanceof Double d ? number(d) : v)
        .append(';'));
    sb.setLength(sb.length() - 1);
    sb.append('.');
  }

  /** Three significant digits or more, never exponents: table cells read as plain numbers. */
  public static String number(double v) {
    if (Double.isNaN(v)) return "n/a";
    double a = Math.abs(v);
    String format = a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : a >= 0.01 ? "%.4f" : "%.6f";
    return String.format(Locale.ROOT, format, v);
  }
}
