package io.shardtrain.samples.report;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigSyntax;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of an earlier {@code bench suite}'s {@code suite.json}, by name, and the comparison
 * of a new run's figures with them: a figure regressed when it moved the worse way (down for a
 * figure where higher is better, up for the others) by more than the tolerance, in percent of the
 * baseline's value: the timed figures' tolerance, or the seeded figures' one.
 */
public final class SuiteBaseline {
  /**
   * One figure against the baseline: {@code baseline} NaN when the baseline has no value for it;
   * {@code changePct} the change in percent of the baseline's value, NaN when there is nothing to
   * divide by; {@code worsePct} how far it moved the worse way (negative: it got better).
   */
  public record Change(SuiteFigure figure, boolean inBaseline, double baseline, double changePct, double worsePct,
      boolean regressed) {}

  /** A whole run against the baseline; {@code missing}: the baseline's figures this run did not measure. */
  public record Check(Path file, double tolerancePct, double seededTolerancePct, List<Change> changes,
      List<String> missing) {
    public List<Change> regressions() {
      return changes.stream().filter(Change::regressed).toList();
    }
  }

  private final Path file;
  private final Map<String, Double> values;
  private final Map<String, String> units;
  private final Map<String, Boolean> higherIsBetter;
  private final Map<String, String> parameters;

  private SuiteBaseline(Path file, Map<String, Double> values, Map<String, String> units,
      Map<String, Boolean> higherIsBetter, Map<String, String> parameters) {
    this.file = file;
    this.values = values;
    this.units = units;
    this.higherIsBetter = higherIsBetter;
    this.parameters = parameters;
  }

  /** Reads {@code file}, the {@code --baseline} of a suite; fails naming the file and what is wrong with it. */
  public static SuiteBaseline load(Path file) throws NoSuchFileException {
    return load(file, "baseline", "the --baseline suite.json");
  }

  /**
   * Reads {@code file}; fails naming it as {@code role} (a missing file as {@code given}) and what is
   * wrong with it.
   */
  public static SuiteBaseline load(Path file, String role, String given) throws NoSuchFileException {
    if (!Files.isRegularFile(file)) throw new NoSuchFileException(file + " (" + given + ")");
    Map<String, Double> values = new LinkedHashMap<>();
    Map<String, String> units = new LinkedHashMap<>();
    Map<String, Boolean> higherIsBetter = new LinkedHashMap<>();
    Map<String, String> parameters = new LinkedHashMap<>();
    try {
      Config c = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setSyntax(ConfigSyntax.JSON));
      for (Config f : c.getConfigList("figures")) {
        String name = f.getString("name");
        // A figure the earlier run could not measure was written as null.
        double value = f.getIsNull("value") ? Double.NaN : f.getDouble("value");
        if (values.put(name, value) != null) throw new IllegalArgumentException(role + " " + file
            + " names the figure '" + name + "' twice");
        units.put(name, f.hasPath("unit") ? f.getString("unit") : "");
        higherIsBetter.put(name, !f.hasPath("higher_is_better") || f.getBoolean("higher_is_better"));
      }
      if (c.hasPath("parameters")) {
        c.getObject("parameters").forEach((k, v) -> parameters.put(k, String.valueOf(v.unwrapped())));
      }
    } catch (ConfigException e) {
      throw new IllegalArgumentException(role + " " + file + " is not a bench suite's suite.json: "
          + e.getMessage().lines().findFirst().orElse(""));
    }
    if (values.isEmpty()) throw new IllegalArgumentException(role + " " + file + " has no figures");
    return new SuiteBaseline(file, values, units, higherIsBetter, parameters);
  }

  public Path file() {
    return file;
  }

  /** Every figure's value by name, in the file's order; NaN where the file has none. */
  public Map<String, Double> values() {
    return java.util.Collections.unmodifiableMap(values);
  }

  /**
   * The parameters this run set otherwise than the baseline's run, as {@code name value (baseline
   * value)}: figures of other sizes or step counts compare badly. The tolerances are no figure's
   * setting, so they are left out.
   */
  public List<String> parameterDifferences(Map<String, Object> now) {
    List<String> differences = new ArrayList<>();
    now.forEach((k, v) -> {
      String old = parameters.get(k);
      if (old != null && !k.endsWith("tolerance_pct") && !old.equals(String.valueOf(v))) {
        differences.add(k + " " + v + " (baseline " + old + ")");
      }
    });
    return differences;
  }

  /** Whether the file says higher is better for a figure (so when it says nothing). */
  public boolean higherIsBetter(String name) {
    return higherIsBetter.getOrDefault(name, true);
  }

  /** A figure's unit, empty when the file names none. */
  public String unit(String name) {
    return units.getOrDefault(name, "");
  }

  /**
   * Compares each figure with the baseline's figure of the same name: a timed figure against
   * {@code tolerancePct}, a seeded one against {@code seededTolerancePct}, both at least 0.
   */
  public Check compare(List<SuiteFigure> figures, double tolerancePct, double seededTolerancePct) {
    List<Change> changes = new ArrayList<>();
    List<String> measured = new ArrayList<>();
    for (SuiteFigure f : figures) {
      measured.add(f.name());
      changes.add(compare(f, f.seeded() ? seededTolerancePct : tolerancePct));
    }
    List<String> missing = values.keySet().stream().filter(n -> !measured.contains(n)).toList();
    return new Check(file, tolerancePct, seededTolerancePct, List.copyOf(changes), missing);
  }

  private Change compare(SuiteFigure f, double tolerancePct) {
    Double old = values.get(f.name());
    if (old == null) return new Change(f, false, Double.NaN, Double.NaN, Double.NaN, false);
    boolean comparable = Double.isFinite(old) && old != 0 && Double.isFinite(f.value());
    double change = comparable ? 100 * (f.value() - old) / Math.abs(old) : Double.NaN;
    double worse = f.higherIsBetter() ? -change : change;
    return new Change(f, true, old, change, worse, comparable && worse > tolerancePct);
  }
}
