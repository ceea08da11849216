package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.report.Baseline;
import io.shardtrain.samples.report.ExperimentReport;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code shardtrain experiment}: a matrix of local runs (the single process first, then every mode
 * with every trainer count), one after another, each as {@code local} runs it with the same flags,
 * reported as markdown, JSON and charts, and optionally checked against an earlier experiment's
 * results for regressions.
 */
@Command(name = "experiment", mixinStandardHelpOptions = true,
    description = {"Run a matrix of local trainings (the single process, then each --modes with each --trainers) "
        + "one at a time and write DIR/report.md, DIR/results.json and PNG charts.",
        "With --baseline, compare each run with the same run of an earlier results.json."})
final class ExperimentCommand implements Callable<Integer> {
  /** Exit status when --fail-on-regression is given and a run regressed. */
  static final int REGRESSION_EXIT = 3;
  /** The slowdown that marks a regression when --fail-on-regression does not give one. */
  static final double DEFAULT_SLOWER_PCT = 10;

  /** How a run of one mode trains; the single process is no mode of the matrix but its base. */
  @FunctionalInterface
  interface ModeRun {
    LocalRun.Outcome train(LocalRun run, Config config, TrainSettings settings, DataSets.TrainTest data, int ps,
        int trainers) throws Exception;
  }

  /** The modes --modes takes, by name; a new mode is one entry. */
  static final Map<String, ModeRun> MODES = Map.of(
      "sync", (run, config, settings, data, ps, trainers) -> run.cluster(config, settings, data, ps, trainers, true),
      "async", (run, config, settings, data, ps, trainers) -> run.cluster(config, settings, data, ps, trainers, true),
      "allreduce", (run, config, settings, data, ps, trainers) -> run.cluster(config, settings, data, ps, trainers, true));

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Mixin TrainingFlags flags;
  @Option(names = "--modes", defaultValue = "sync,async", paramLabel = "M1,M2",
      description = "Modes to run, each with every trainer count: sync, async (single, the single process, always "
          + "runs once first) (default: ${DEFAULT-VALUE}).")
  String modes;
  @Option(names = "--trainers", defaultValue = "1,2", paramLabel = "N1,N2",
      description = "Trainer counts to run each mode with, each on a local cluster of --ps parameter-server nodes "
          + "(at least 1) (default: ${DEFAULT-VALUE}).")
  String trainers;
  @Option(names = "--out", required = true, paramLabel = "DIR",
      description = "Where report.md, results.json, the charts and each run's metrics CSV go.")
  Path out;
  @Option(names = "--target-accuracy", defaultValue = "0.95",
      description = "The test accuracy whose time to reach the report gives (default: ${DEFAULT-VALUE}).")
  double targetAccuracy;
  @Option(names = "--baseline", paramLabel = "FILE",
      description = "An earlier experiment's results.json: each run is compared with its run of the same mode, "
          + "trainers and ps nodes.")
  Path baseline;
  @Option(names = "--fail-on-regression", paramLabel = "PCT",
      description = "With --baseline: a run slower by more than PCT percent (default for marking: 10) or less "
          + "accurate than the tolerance is a regression, and the exit status is 3.")
  Double failOnRegression;
  @Option(names = "--accuracy-tolerance", defaultValue = "0.01",
      description = "With --baseline: how much lower (absolute) a run's test accuracy may be than the baseline's "
          + "(default: ${DEFAULT-VALUE}).")
  double accuracyTolerance;

  /** One cell of the matrix. */
  private record Cell(String mode, int trainers) {}

  /** A mode's effective configuration and the settings read from it, once. */
  private record ModeSetup(Config config, TrainSettings settings) {}

  @Override
  public Integer call() throws Exception {
    // Everything is checked before the first run starts, so a bad flag costs no training.
    List<String> modeList = parseModes(modes);
    List<Integer> trainerList = parseTrainers(trainers);
    if (flags.ps < 0) throw new IllegalArgumentException("--ps must not be negative, got " + flags.ps);
    if (!(targetAccuracy > 0 && targetAccuracy <= 1)) {
      throw new IllegalArgumentException("--target-accuracy must be in (0, 1], got " + targetAccuracy);
    }
    if (accuracyTolerance < 0) {
      throw new IllegalArgumentException("--accuracy-tolerance must not be negative, got " + accuracyTolerance);
    }
    if (failOnRegression != null && baseline == null) {
      throw new IllegalArgumentException("--fail-on-regression compares with a --baseline results.json; none given");
    }
    if (failOnRegression != null && !(failOnRegression >= 0)) {
      throw new IllegalArgumentException("--fail-on-regression must be a percentage of at least 0, got "
          + failOnRegression);
    }
    Baseline old = baseline == null ? null : Baseline.load(baseline);
    Config singleConfig = flags.effectiveConfig(null);
    TrainSettings singleSettings = TrainSettings.fromConfig(singleConfig);
    Map<String, ModeSetup> setups = new LinkedHashMap<>();
    for (String m : modeList) {
      Config c = flags.effectiveConfig(m);
      WirePrecision.gradientsFromConfig(c);
      LocalRun.blockMode(c);
      setups.put(m, new ModeSetup(c, TrainSettings.fromConfig(c)));
    }
    flags.layout();
    Backends.create(singleSettings.backend(), singleSettings.computeThreads()).backend().close();

    PrintWriter stdout = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<Cell> cells = new ArrayList<>();
    cells.add(new Cell("single", 1));
    for (String m : modeList) {
      for (int n : trainerList) cells.add(new Cell(m, n));
    }
    err.printf("shardtrain: experiment of %d runs: %s%n", cells.size(),
        String.join(", ", cells.stream().map(c -> c.mode() + " x" + c.trainers()).toList()));
    var data = DataSets.load(singleSettings.dataset(), singleSettings.dataDir());
    LocalRun run = new LocalRun(flags, err);
    Path runsDir = out.resolve("runs");
    Files.createDirectories(runsDir);
    List<ExperimentReport.Run> runs = new ArrayList<>();
    for (Cell cell : cells) {
      LocalRun.Outcome o;
      if (cell.mode().equals("single")) {
        o = run.single(singleSettings, data);
      } else {
        ModeSetup m = setups.get(cell.mode());
        o = MODES.get(cell.mode()).train(run, m.config(), m.settings(), data, flags.ps, cell.trainers());
      }
      ExperimentReport.Run r = toRun(cell, o);
      runs.add(r);
      o.metrics().writeCsv(runsDir.resolve(cell.mode() + "-" + cell.trainers() + ".csv"));
      stdout.printf(Locale.ROOT, "%s x%d: %.0f samples/s, test accuracy %.4f, final loss %.4f, %.0f bytes sent "
          + "per sample%n", cell.mode(), cell.trainers(), r.samplesPerSec(), r.testAccuracy(), r.finalLoss(),
          r.bytesPerSample());
      stdout.flush();
    }

    double slowerPct = failOnRegression != null ? failOnRegression : DEFAULT_SLOWER_PCT;
    ExperimentReport.BaselineCheck check = null;
    if (old != null) {
      List<Baseline.Comparison> comparisons = new ArrayList<>();
      for (ExperimentReport.Run r : runs) {
        comparisons.add(old.compare(r.mode(), r.trainers(), r.ps(), r.samplesPerSec(), r.testAccuracy(), slowerPct,
            accuracyTolerance));
      }
      check = new ExperimentReport.BaselineCheck(old, slowerPct, accuracyTolerance, comparisons);
    }
    String title = "Experiment: " + singleSettings.dataset() + ", modes "
        + (modeList.isEmpty() ? "single" : String.join(", ", modeList)) + ", trainers "
        + trainerList.stream().map(String::valueOf).collect(Collectors.joining(", "));
    new ExperimentReport(title, setup(singleSettings, singleConfig), targetAccuracy, runs, check).write(out);
    stdout.println("report: " + out.resolve(ExperimentReport.MARKDOWN) + " (results " + ExperimentReport.JSON
        + ", charts " + ExperimentReport.ACCURACY_CHART + ", " + ExperimentReport.THROUGHPUT_CHART + ", "
        + ExperimentReport.LOSS_CHART + ")");
    if (check == null) return 0;
    long regressions = check.regressions();
    stdout.printf(Locale.ROOT, "baseline %s: %d regression(s) (slower by more than %.1f%% or accuracy lower by more "
        + "than %.4f)%n", old.file(), regressions, slowerPct, accuracyTolerance);
    return regressions > 0 && failOnRegression != null ? REGRESSION_EXIT : 0;
  }

  private ExperimentReport.Run toRun(Cell cell, LocalRun.Outcome o) {
    Map<String, Object> m = o.summary();
    int ps = cell.mode().equals("single") ? 0 : ((Number) m.get("ps")).intValue();
    return new ExperimentReport.Run(cell.mode(), cell.trainers(), ps, number(m, "steps").longValue(),
        number(m, "samples").longValue(), number(m, "samples_per_sec").doubleValue(),
        o.metrics().secondHalfSamplesPerSec(),
        number(m, "wall_seconds").doubleValue(), number(m, "test_accuracy").doubleValue(),
        // Not the summary's final_loss (a moving average weighted by step order): the mean of the last
        // steps compares alike across modes with different step counts.
        o.metrics().recentLoss(), Math.max(0, o.bytesSent()), o.metrics().evaluations(),
        o.metrics().smoothedLoss());
  }

  private static Number number(Map<String, Object> m, String key) {
    return (Number) m.get(key);
  }

  /** How every run was set up, for the report's header. */
  private Map<String, Object> setup(TrainSettings s, Config config) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("dataset", s.dataset());
    m.put("steps per trainer", flags.steps != null ? String.valueOf(flags.steps) : "from epochs " + s.epochs());
    m.put("batch", s.batch());
    m.put("hidden", s.hidden());
    m.put("optimizer", s.optimizer());
    m.put("lr", s.lr());
    m.put("seed", s.seed());
    m.put("compute threads", s.computeThreads());
    m.put("backend", s.backend());
    m.put("layout", flags.layout);
    m.put("journal", flags.journal != null ? flags.journal : config.getString("shardtrain.persistence.journal"));
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put("java", System.getProperty("java.version"));
    m.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    return m;
  }

  /** The modes of {@code list} without duplicates, in the order given; single is always run, so skipped. */
  static List<String> parseModes(String list) {
    Set<String> modes = new LinkedHashSet<>();
    for (String raw : list.split(",", -1)) {
      String m = raw.trim().toLowerCase(Locale.ROOT);
      if (m.isEmpty()) throw new IllegalArgumentException("--modes has an empty entry in '" + list + "'");
      if (!m.equals("single") && !MODES.containsKey(m)) {
        throw new IllegalArgumentException("--modes: unknown mode '" + m + "' (available: single, "
            + String.join(", ", MODES.keySet().stream().sorted().toList()) + ")");
      }
      if (!m.equals("single")) modes.add(m);
    }
    return List.copyOf(modes);
  }

  /** The trainer counts of {@code list}, each at least 1, without duplicates, in the order given. */
  static List<Integer> parseTrainers(String list) {
    Set<Integer> counts = new LinkedHashSet<>();
    for (String raw : list.split(",", -1)) {
      String t = raw.trim();
      if (t.isEmpty()) throw new IllegalArgumentException("--trainers has an empty entry in '" + list + "'");
      int n;
      try {
        n = Integer.parseInt(t);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--trainers: '" + t + "' is not a whole number");
      }
      if (n < 1) throw new IllegalArgumentException("--trainers: each count must be at least 1, got " + n);
      counts.add(n);
    }
    return List.copyOf(counts);
  }
}
