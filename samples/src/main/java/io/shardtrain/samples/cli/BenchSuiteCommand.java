package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.report.MachineFacts;
import io.shardtrain.samples.report.SuiteBaseline;
import io.shardtrain.samples.report.SuiteFigure;
import io.shardtrain.samples.report.SuiteReport;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
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
 * {@code shardtrain bench suite}: the project's benchmarks one after another in this JVM with fixed
 * seeds (GEMM, the single process and each distributed mode, ps-bandwidth, recovery), written as
 * {@code suite.md} and {@code suite.json}, and, given an earlier {@code suite.json}, checked
 * against it figure by figure: continuous evaluation.
 */
@Command(name = "suite", mixinStandardHelpOptions = true,
    description = {"Run the benchmarks one after another (GEMM: the square product and the training step's "
        + "products; MNIST training: the single process, then sync, async and allreduce with --trainers; "
        + "ps-bandwidth; recovery) and write DIR/suite.md and DIR/suite.json.",
        "With --baseline, mark each figure worse than the baseline's by more than --tolerance percent and exit "
            + "with status 3 when any is.",
        "Training takes the flags of 'local'; where none is given the suite fixes: --dataset mnist --hidden 512,256 "
            + "--optimizer sgd --lr 0.05 --batch 64 --compute-threads 1 --journal memory --seed 42 --steps 3000 "
            + "--ps 2."})
final class BenchSuiteCommand implements Callable<Integer> {
  /** Exit status when a figure regressed against the baseline (2 is a usage error, 1 an internal one). */
  static final int REGRESSION_EXIT = ExperimentCommand.REGRESSION_EXIT;
  /** The tolerance without --tolerance; docs/BENCHMARKS.md says how the machine's spread chose it. */
  static final double DEFAULT_TOLERANCE_PCT = 90;
  /** The tolerance of seeded figures without --seeded-tolerance; see docs/BENCHMARKS.md too. */
  static final double DEFAULT_SEEDED_TOLERANCE_PCT = 5;
  static final List<String> PARTS = List.of("gemm", "training", "ps-bandwidth", "recovery");
  /** The distributed modes the training part runs after the single process, in this order. */
  static final List<String> MODES = List.of("sync", "async", "allreduce");

  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Mixin TrainingFlags flags;
  @Option(names = "--out", required = true, paramLabel = "DIR", description = "Where suite.md and suite.json go.")
  Path out;
  @Option(names = "--baseline", paramLabel = "FILE", description = "An earlier run's suite.json to compare with.")
  Path baseline;
  @Option(names = "--tolerance", paramLabel = "PCT",
      description = "With --baseline: a figure that got worse by more than PCT percent of the baseline's value "
          + "regressed (default: " + DEFAULT_TOLERANCE_PCT + ", from this machine's run-to-run spread, see "
          + "docs/BENCHMARKS.md).")
  Double tolerance;
  @Option(names = "--seeded-tolerance", paramLabel = "PCT",
      description = "With --baseline: the same for the figures the seeds set (test accuracy, bytes sent per sample) "
          + "(default: " + DEFAULT_SEEDED_TOLERANCE_PCT + ").")
  Double seededTolerance;
  @Option(names = "--parts", defaultValue = "gemm,training,ps-bandwidth,recovery", paramLabel = "P1,P2",
      description = "Which parts to run, in the suite's order whatever the order given (default: ${DEFAULT-VALUE}).")
  String parts;
  @Option(names = "--trainers", defaultValue = "2",
      description = "Trainers of each distributed run (default: ${DEFAULT-VALUE}).")
  int trainers;
  @Option(names = "--gemm-n", defaultValue = "1024",
      description = "Size of the square GEMM (default: ${DEFAULT-VALUE}).")
  int gemmN;
  @Option(names = "--gemm-warmup", defaultValue = "5", description = "GEMM warm-up runs (default: ${DEFAULT-VALUE}).")
  int gemmWarmup;
  @Option(names = "--gemm-iterations", defaultValue = "15",
      description = "GEMM measured runs, of which the median counts (default: ${DEFAULT-VALUE}).")
  int gemmIterations;
  @Option(names = "--ps-floats", defaultValue = "1048576",
      description = "ps-bandwidth: parameter size (default: ${DEFAULT-VALUE}).")
  int psFloats;
  @Option(names = "--ps-rounds", defaultValue = "20",
      description = "ps-bandwidth: measured rounds (default: ${DEFAULT-VALUE}).")
  int psRounds;
  @Option(names = "--ps-warmup", defaultValue = "300",
      description = "ps-bandwidth: warm-up rounds (default: ${DEFAULT-VALUE}).")
  int psWarmup;
  @Option(names = "--recovery-floats", defaultValue = "1048576",
      description = "recovery: parameter size (default: ${DEFAULT-VALUE}).")
  int recoveryFloats;
  @Option(names = "--recovery-snapshot-every", defaultValue = "10",
      description = "recovery: snapshot interval in updates (default: ${DEFAULT-VALUE}).")
  int recoverySnapshotEvery;

  @Override
  public Integer call() throws Exception {
    // Everything is checked before the first part starts, so a bad flag or baseline costs no run.
    double tolerancePct = tolerance != null ? tolerance : DEFAULT_TOLERANCE_PCT;
    if (!(tolerancePct >= 0) || Double.isInfinite(tolerancePct)) {
      throw new IllegalArgumentException("--tolerance must be a percentage of at least 0, got " + tolerance);
    }
    double seededTolerancePct = seededTolerance != null ? seededTolerance : DEFAULT_SEEDED_TOLERANCE_PCT;
    if (!(seededTolerancePct >= 0) || Double.isInfinite(seededTolerancePct)) {
      throw new IllegalArgumentException("--seeded-tolerance must be a percentage of at least 0, got "
          + seededTolerance);
    }
    if ((tolerance != null || seededTolerance != null) && baseline == null) {
      throw new IllegalArgumentException((tolerance != null ? "--tolerance" : "--seeded-tolerance")
          + " applies to a comparison with a --baseline suite.json; none given");
    }
    Set<String> run = parseParts(parts);
    BenchCommand.atLeast("--trainers", trainers, 1);
    BenchCommand.atLeast("--gemm-n", gemmN, 1);
    BenchCommand.atLeast("--gemm-warmup", gemmWarmup, 0);
    BenchCommand.atLeast("--gemm-iterations", gemmIterations, 1);
    BenchCommand.atLeast("--ps-floats", psFloats, 1);
    BenchCommand.atLeast("--ps-rounds", psRounds, 1);
    BenchCommand.atLeast("--ps-warmup", psWarmup, 0);
    BenchCommand.atLeast("--recovery-floats", recoveryFloats, 1);
    BenchCommand.atLeast("--recovery-snapshot-every", recoverySnapshotEvery, 1);
    if (flags.steps != null) BenchCommand.atLeast("--steps", flags.steps, 1);
    if (flags.ps < 0) throw new IllegalArgumentException("--ps must not be negative, got " + flags.ps);
    fixSuiteDefaults();
    SuiteBaseline old = baseline == null ? null : SuiteBaseline.load(baseline);
    Config singleConfig = flags.effectiveConfig(null);
    TrainSettings singleSettings = TrainSettings.fromConfig(singleConfig);
    Map<String, Config> modeConfigs = new LinkedHashMap<>();
    for (String m : MODES) {
      Config c = flags.effectiveConfig(m);
      WirePrecision.gradientsFromConfig(c);
      LocalRun.blockMode(c);
      modeConfigs.put(m, c);
    }
    flags.layout();
    Backends.create(singleSettings.backend(), singleSettings.computeThreads()).backend().close();
    // Made now, so a path that cannot hold the report fails before the benchmarks, not after them.
    Files.createDirectories(out);
    DataSets.TrainTest data = run.contains("training")
        ? DataSets.load(singleSettings.dataset(), singleSettings.dataDir()) : null;

    Map<String, Object> parameters = parameters(run, singleSettings, tolerancePct, seededTolerancePct);
    if (old != null && !old.parameterDifferences(parameters).isEmpty()) {
      spec.commandLine().getErr().println("shardtrain: the baseline ran with other parameters: "
          + String.join(", ", old.parameterDifferences(parameters)));
    }
    List<SuiteFigure> figures = new ArrayList<>();
    PrintWriter stdout = spec.commandLine().getOut();
    SuiteParts suite = new SuiteParts(stdout);
    if (run.contains("gemm")) figures.addAll(suite.gemm(singleSettings, gemmN, gemmWarmup, gemmIterations));
    if (run.contains("training")) {
      LocalRun local = new LocalRun(flags, spec.commandLine().getErr());
      figures.addAll(suite.training(local, singleSettings, modeConfigs, data, flags.ps, trainers));
    }
    if (run.contains("ps-bandwidth")) figures.addAll(suite.psBandwidth(psFloats, psRounds, psWarmup));
    if (run.contains("recovery")) figures.addAll(suite.recovery(recoveryFloats, recoverySnapshotEvery));

    SuiteBaseline.Check check = old == null ? null : old.compare(figures, tolerancePct, seededTolerancePct);
    new SuiteReport(MachineFacts.now(), parameters, figures, check).write(out);
    stdout.println("report: " + out.resolve(SuiteReport.MARKDOWN) + " (figures " + SuiteReport.JSON + ")");
    if (check == null) return 0;
    List<SuiteBaseline.Change> worse = check.regressions();
    String which = worse.stream().map(c -> String.format(Locale.ROOT, "%s (%+.1f%%)", c.figure().name(),
        c.changePct())).collect(Collectors.joining(", "));
    stdout.printf(Locale.ROOT, "baseline %s: %d of %d figure(s) regressed by more than %.1f%% (seeded: %.1f%%)%s%n",
        old.file(), worse.size(), figures.size(), tolerancePct, seededTolerancePct, which.isEmpty() ? "" : ": " + which);
    return worse.isEmpty() ? 0 : REGRESSION_EXIT;
  }

  /** The suite's fixed training setup, where no flag overrides it: the MNIST MLP of docs/BENCHMARKS.md. */
  private void fixSuiteDefaults() {
    if (flags.dataset == null) flags.dataset = "mnist";
    if (flags.hidden == null) flags.hidden = "512,256";
    if (flags.optimizer == null) flags.optimizer = "sgd";
    if (flags.lr == null) flags.lr = 0.05;
    if (flags.batch == null) flags.batch = 64;
    if (flags.computeThreads == null) flags.computeThreads = 1;
    if (flags.journal == null) flags.journal = "memory";
    if (flags.seed == null) flags.seed = 42L;
    if (flags.steps == null && flags.epochs == null) flags.steps = 3000L;
    if (!spec.commandLine().getParseResult().hasMatchedOption("--ps")) flags.ps = 2;
  }

  /** What the figures depend on besides the machine: every flag of every part that runs. */
  private Map<String, Object> parameters(Set<String> run, TrainSettings s, double tolerancePct,
      double seededTolerancePct) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("parts", String.join(",", run));
    if (run.contains("gemm")) {
      m.put("gemm_n", gemmN);
      m.put("gemm_warmup", gemmWarmup);
      m.put("gemm_iterations", gemmIterations);
    }
    if (run.contains("gemm") || run.contains("training")) {
      m.put("compute_threads", s.computeThreads());
      m.put("hidden", Arrays.stream(s.hidden()).mapToObj(String::valueOf).collect(Collectors.joining(",")));
      m.put("batch", s.batch());
    }
    if (run.contains("training")) {
      m.put("dataset", s.dataset());
      m.put("steps", flags.steps != null ? flags.steps : 0);
      m.put("epochs", flags.steps != null ? 0 : s.epochs());
      m.put("optimizer", s.optimizer());
      m.put("lr", s.lr());
      m.put("seed", s.seed());
      m.put("backend", s.backend());
      m.put("trainers", trainers);
      m.put("ps", Math.max(1, flags.ps));
      m.put("layout", flags.layout);
      m.put("journal", flags.journal);
    }
    if (run.contains("ps-bandwidth")) {
      m.put("ps_floats", psFloats);
      m.put("ps_rounds", psRounds);
      m.put("ps_warmup", psWarmup);
    }
    if (run.contains("recovery")) {
      m.put("recovery_floats", recoveryFloats);
      m.put("recovery_snapshot_every", recoverySnapshotEvery);
    }
    if (baseline != null) {
      m.put("tolerance_pct", tolerancePct);
      m.put("seeded_tolerance_pct", seededTolerancePct);
    }
    return m;
  }

  /** The parts of {@code list}, known and without duplicates, in the suite's order. */
  static Set<String> parseParts(String list) {
    Set<String> given = new LinkedHashSet<>();
    for (String raw : list.split(",", -1)) {
      String p = raw.trim().toLowerCase(Locale.ROOT);
      if (p.isEmpty()) throw new IllegalArgumentException("--parts has an empty entry in '" + list + "'");
      if (!PARTS.contains(p)) {
        throw new IllegalArgumentException("--parts: unknown part '" + p + "' (available: " + String.join(", ", PARTS)
            + ")");
      }
      given.add(p);
    }
    Set<String> ordered = new LinkedHashSet<>();
    for (String p : PARTS) if (given.contains(p)) ordered.add(p);
    return ordered;
  }
}
