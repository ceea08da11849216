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
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The runs of an earlier experiment's {@code results.json}, to compare a new experiment's runs
 * with: a run is compared with the baseline's run of the same mode, trainers and ps nodes.
 */
public final class Baseline {
  /** What a baseline run measured. */
  public record Figures(double samplesPerSec, double testAccuracy) {}

  /**
   * A run against its baseline: {@code speedChangePct}, the change in samples/s in percent of the
   * baseline's; {@code accuracyChange}, new accuracy minus the baseline's; {@code regressions}, what
   * crossed a threshold, empty when nothing did.
   */
  public record Comparison(Figures baseline, double speedChangePct, double accuracyChange, List<String> regressions) {
    public boolean regressed() {
      return !regressions.isEmpty();
    }
  }

  private final Path file;
  private final Map<String, Figures> runs;

  private Baseline(Path file, Map<String, Figures> runs) {
    this.file = file;
    this.runs = runs;
  }

  /** Reads {@code file}; fails naming the file and what is wrong with it. */
  public static Baseline load(Path file) throws NoSuchFileException {
    if (!Files.isRegularFile(file)) throw new NoSuchFileException(file + " (the --baseline results.json)");
    Map<String, Figures> runs = new HashMap<>();
    try {
      Config c = ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setSyntax(ConfigSyntax.JSON));
      for (Config run : c.getConfigList("runs")) {
        runs.put(key(run.getString("mode"), run.getInt("trainers"), run.getInt("ps")),
            new Figures(run.getDouble("samples_per_sec"), run.getDouble("test_accuracy")));
      }
    } catch (ConfigException e) {
      throw new IllegalArgumentException("baseline " + file + " is not an experiment's results.json: " + e.getMessage());
    }
    if (runs.isEmpty()) throw new IllegalArgumentException("baseline " + file + " has no runs");
    return new Baseline(file, runs);
  }

  public Path file() {
    return file;
  }

  /**
   * Compares a run with the baseline's run of the same mode, trainers and ps nodes, or returns null
   * when the baseline has none. A regression: samples/s lower by more than {@code slowerPct}
   * percent, or test accuracy lower by more than {@code accuracyTolerance} (absolute).
   */
  public Comparison compare(String mode, int trainers, int ps, double samplesPerSec, double testAccuracy,
      double slowerPct, double accuracyTolerance) {
    Figures old = runs.get(key(mode, trainers, ps));
    if (old == null) return null;
    double speedChange = old.samplesPerSec() > 0 ? 100 * (samplesPerSec - old.samplesPerSec()) / old.samplesPerSec() : 0;
    double accuracyChange = testAccuracy - old.testAccuracy();
    List<String> regressions = new ArrayList<>();
    if (-speedChange > slowerPct) {
      regressions.add(String.format(Locale.ROOT, "%.1f%% slower (%.0f samples/s, baseline %.0f; threshold %.1f%%)",
          -speedChange, samplesPerSec, old.samplesPerSec(), slowerPct));
    }
    if (-accuracyChange > accuracyTolerance) {
      regressions.add(String.format(Locale.ROOT, "accuracy %.4f, baseline %.4f (lower by %.4f; tolerance %.4f)",
          testAccuracy, old.testAccuracy(), -accuracyChange, accuracyTolerance));
    }
    return new Comparison(old, speedChange, accuracyChange, List.copyOf(regressions));
  }

  private static String key(String mode, int trainers, int ps) {
    return mode + "/" + trainers + "/" + ps;
  }
}
