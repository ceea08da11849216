package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.bench.GemmBenchmark;
import io.shardtrain.bench.PsBandwidthBenchmark;
import io.shardtrain.bench.RecoveryBenchmark;
import io.shardtrain.compute.FileTrees;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.persistence.journal.JournalConfig;
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

  /** Blocks of ps-bandwidth and recovery, as their own commands cut them by default. */
  private static final int BLOCK_FLOATS = 262144;

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
    atLeast("--trainers", trainers, 1);
    atLeast("--gemm-n", gemmN, 1);
    atLeast("--gemm-warmup", gemmWarmup, 0);
    atLeast("--gemm-iterations", gemmIterations, 1);
    atLeast("--ps-floats", psFloats, 1);
    atLeast("--ps-rounds", psRounds, 1);
    atLeast("--ps-warmup", psWarmup, 0);
    atLeast("--recovery-floats", recoveryFloats, 1);
    atLeast("--recovery-snapshot-every", recoverySnapshotEvery, 1);
    if (flags.steps != null) atLeast("--steps", flags.steps, 1);
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
    DataSets.TrainTest data = run.contains("training")
        ? DataSets.load(singleSettings.dataset(), singleSettings.dataDir()) : null;

    Map<String, Object> parameters = parameters(run, singleSettings, tolerancePct, seededTolerancePct);
    if (old != null && !old.parameterDifferences(parameters).isEmpty()) {
      spec.commandLine().getErr().println("shardtrain: the baseline ran with other parameters: "
          + String.join(", ", old.parameterDifferences(parameters)));
    }
    List<SuiteFigure> figures = new ArrayList<>();
    PrintWriter stdout = spec.commandLine().getOut();
    if (run.contains("gemm")) figures.addAll(gemm(singleSettings, stdout));
    if (run.contains("training")) figures.addAll(training(singleSettings, modeConfigs, data, stdout));
    if (run.contains("ps-bandwidth")) figures.addAll(psBandwidth(stdout));
    if (run.contains("recovery")) figures.addAll(recovery(stdout));

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

  private List<SuiteFigure> gemm(TrainSettings s, PrintWriter stdout) {
    int threads = s.computeThreads();
    GemmBenchmark.Result square = GemmBenchmark.run(gemmN, threads, gemmWarmup, gemmIterations);
    stdout.println(square);
    // The products of one training step of the suite's MLP; their flops over their median times
    // together is what the step's compute gets.
    int[] hidden = s.hidden();
    int[] dims = new int[hidden.length + 2];
    dims[0] = 784;
    System.arraycopy(hidden, 0, dims, 1, hidden.length);
    dims[dims.length - 1] = 10;
    double flops = 0;
    double seconds = 0;
    for (GemmBenchmark.Shape shape : GemmBenchmark.mlpShapes(s.batch(), dims)) {
      GemmBenchmark.Result r = GemmBenchmark.run(shape, threads, gemmWarmup, gemmIterations);
      stdout.println(r);
      flops += shape.flops();
      seconds += r.medianSeconds();
    }
    String mlp = Arrays.stream(dims).mapToObj(String::valueOf).collect(Collectors.joining("-"));
    return List.of(
        new SuiteFigure("gemm square n=" + gemmN, square.gflops(), "GFLOP/s", true),
        new SuiteFigure("gemm training step " + mlp + " batch " + s.batch(), flops / seconds / 1e9, "GFLOP/s", true));
  }

  private List<SuiteFigure> training(TrainSettings singleSettings, Map<String, Config> modeConfigs,
      DataSets.TrainTest data, PrintWriter stdout) throws Exception {
    LocalRun run = new LocalRun(flags, spec.commandLine().getErr());
    List<SuiteFigure> figures = new ArrayList<>();
    Map<String, Object> single = run.single(singleSettings, data).summary();
    double base = number(single, "samples_per_sec");
    figures.add(new SuiteFigure("single samples/s", base, "samples/s", true));
    figures.add(new SuiteFigure("single test accuracy", number(single, "test_accuracy"), "fraction", true, true));
    stdout.printf(Locale.ROOT, "single: %.0f samples/s, test accuracy %.4f%n", base, number(single, "test_accuracy"));
    stdout.flush();
    for (String mode : MODES) {
      Config c = modeConfigs.get(mode);
      LocalRun.Outcome o = ExperimentCommand.MODES.get(mode).train(run, c, TrainSettings.fromConfig(c), data,
          flags.ps, trainers);
      Map<String, Object> m = o.summary();
      String label = mode + " x" + trainers;
      double rate = number(m, "samples_per_sec");
      double samples = number(m, "samples");
      double perSample = samples > 0 ? Math.max(0, o.bytesSent()) / samples : 0;
      figures.add(new SuiteFigure(label + " samples/s", rate, "samples/s", true));
      figures.add(new SuiteFigure(label + " samples/s ratio to single", base > 0 ? rate / base : Double.NaN,
          "x single", true));
      figures.add(new SuiteFigure(label + " test accuracy", number(m, "test_accuracy"), "fraction", true, true));
      figures.add(new SuiteFigure(label + " bytes sent per sample", perSample, "bytes", false, true));
      stdout.printf(Locale.ROOT, "%s: %.0f samples/s (%.2f x single), test accuracy %.4f, %.0f bytes sent per "
          + "sample%n", label, rate, base > 0 ? rate / base : Double.NaN, number(m, "test_accuracy"), perSample);
      stdout.flush();
    }
    return figures;
  }

  private List<SuiteFigure> psBandwidth(PrintWriter stdout) {
    var r = PsBandwidthBenchmark.run(psFloats, Math.min(BLOCK_FLOATS, psFloats), psRounds, psWarmup);
    stdout.println(r.summary());
    String of = " (" + psFloats + " floats)";
    return List.of(
        new SuiteFigure("ps-bandwidth raw socket" + of, r.rawGBps(), "GB/s", true),
        new SuiteFigure("ps-bandwidth blocks over Artery" + of, r.inlineGBps(), "GB/s", true),
        new SuiteFigure("ps-bandwidth blocks over the bulk channel" + of, r.bulkGBps(), "GB/s", true));
  }

  private List<SuiteFigure> recovery(PrintWriter stdout) throws Exception {
    // A fresh H2 file, as bench recovery uses by default: the in-memory journal dies with the node.
    Path tmp = Files.createTempDirectory("shardtrain-suite-recovery");
    try {
      var r = RecoveryBenchmark.run(recoveryFloats, Math.min(BLOCK_FLOATS, recoveryFloats), recoverySnapshotEvery,
          JournalConfig.forUrl("jdbc:h2:" + tmp.resolve("journal")));
      stdout.println(r.summary());
      return List.of(new SuiteFigure("recovery (" + recoveryFloats + " floats, snapshot every "
          + recoverySnapshotEvery + ")", r.recoverySeconds(), "s", false));
    } finally {
      FileTrees.delete(tmp);
    }
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

  private static void atLeast(String flag, long value, long min) {
    if (value < min) throw new IllegalArgumentException(flag + " must be at least " + min + ", got " + value);
  }

  private static double number(Map<String, Object> m, String key) {
    return ((Number) m.get(key)).doubleValue();
  }
}
