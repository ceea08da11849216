package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.SavedModels;
import io.shardtrain.actors.metrics.MetricsSettings;
import io.shardtrain.actors.job.Resumption;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.compute.nn.Initialization;
import io.shardtrain.persistence.journal.JournalSettings;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.report.Json;
import io.shardtrain.samples.report.MetricsLog;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code shardtrain local}: a training job on this machine, with the embedded defaults. */
@Command(name = "local", mixinStandardHelpOptions = true,
    description = "Train on this machine. Flags override the HOCON settings (shardtrain.train.*).")
final class LocalCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Mixin TrainingFlags flags;
  @Option(names = "--trainers",
      description = "Trainers (default: shardtrain.train.trainers, ${sys:shardtrain.default.train.trainers}).")
  Integer trainersFlag;
  /** The flag, else the configuration's (a {@code --config} file's) count. */
  private int trainers;
  @Option(names = "--mode", description = "sync, async or allreduce (default: ${sys:shardtrain.default.train.mode}).")
  String mode;
  @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
      description = "Write a JSON report here.")
  Path report;
  @Option(names = "--save-model", paramLabel = "DIR", description = "Save the trained model here.")
  Path saveModel;
  @Option(names = "--export-npy", paramLabel = "DIR", description = "Also write the trained parameters as NumPy .npy files.")
  Path exportNpy;
  @Option(names = "--profile", description = "Print where the step time went; the report gets a profile object. "
      + "Local cluster: each trainer's compute, waits for pushes, pulls and the master, other, and the cluster's "
      + "serialization time. Single process (cpu backend): each backend operation and shape (GEMMs with GFLOP/s), "
      + "the optimizer, data and other.")
  boolean profile;
  @Option(names = "--profile-skip-first", paramLabel = "STEPS", description = "Single process: leave the first STEPS "
      + "steps out of --profile's figures; the JIT compiles the step's code during its first thousands of steps, "
      + "which run slower (default: 0).")
  long profileSkipFirst;

  @Override
  public Integer call() throws Exception {
    if (trainersFlag != null && trainersFlag < 1) {
      throw new IllegalArgumentException("--trainers must be at least 1, got " + trainersFlag);
    }
    if (flags.ps < 0) throw new IllegalArgumentException("--ps must not be negative, got " + flags.ps);
    Config config = flags.effectiveConfig(mode);
    trainers = trainersFlag != null ? trainersFlag : config.getInt("shardtrain.train.trainers");
    ShardTrain.requireTrainers(trainers);
    TrainSettings settings = TrainSettings.fromConfig(config);
    DataSets.requireKnown(settings.dataset());
    checkProfileSkip(settings);
    // A misspelt mode fails whatever runs, though a single process has none.
    BlockSpec.Mode blockMode = LocalRun.blockMode(config);
    // The dense kernels compile while the data is read; a factorization machine or a GPU does not run them.
    if (!CtrData.isCtr(settings.dataset())) Backends.warmUp(settings.backend());
    // Read here too, so a bad value fails before any node starts.
    WirePrecision precision = WirePrecision.gradientsFromConfig(config);
    JournalSettings.fromConfig(config);
    MetricsSettings.fromConfig(config);
    PsSettings.fromConfig(config);
    flags.layout();
    if (flags.maxStaleness != null && blockMode != BlockSpec.Mode.ASYNC) {
      spec.commandLine().getErr().println("shardtrain: --max-staleness bounds async pushes; a "
          + blockMode.name().toLowerCase(java.util.Locale.ROOT) + " job has none, so it is ignored here");
    }
    if (!CtrData.isCtr(settings.dataset())) {
      TrainingFlags.oversubscribed(settings.computeThreads(), trainers, settings.backend())
          .ifPresent(spec.commandLine().getErr()::println);
    }
    LocalRun run = new LocalRun(flags, spec.commandLine().getErr());
    // Where the model goes is checked before it trains, so a bad path costs no training.
    if (saveModel != null) io.shardtrain.persistence.model.ModelFiles.checkSavable(saveModel);
    if (exportNpy != null) java.nio.file.Files.createDirectories(exportNpy);
    // And where it starts from before the data loads or a node starts: a model of the right kind.
    boolean ctr = CtrData.isCtr(settings.dataset());
    if (settings.initFrom() != null) {
      Map<String, String> described = io.shardtrain.persistence.model.ModelFiles.readManifest(settings.initFrom())
          .description();
      SavedModels.requireKind(described, settings.initFrom(), ctr ? SavedModels.FM : SavedModels.MLP,
          "--dataset " + settings.dataset());
      String activation = described.get("activation");
      if (!ctr && activation != null && !activation.equals(settings.activation())) {
        spec.commandLine().getErr().println("shardtrain: warning: " + settings.initFrom() + " was trained with "
            + "activation " + activation + "; this run's is " + settings.activation() + " (--activation)");
      }
    }
    if (ctr) return runCtr(run, config, settings);
    if (flags.ps > 0 || trainers > 1) return runCluster(run, config, settings);
    if (precision != WirePrecision.FP32) {
      spec.commandLine().getErr().println("shardtrain: --gradient-precision applies to gradients sent to "
          + "parameter blocks (--ps or --trainers above 1); a single process sends none, so it is ignored here");
    }
    if (mode != null) {
      spec.commandLine().getErr().println("shardtrain: --mode sets how a local cluster's trainers combine their"
          + " gradients (--ps or --trainers above 1); a single process trains alone, so it is ignored here");
    }
    List<String> clusterOnly = java.util.stream.Stream.of("--journal", "--layout", "--block-size", "--max-staleness")
        .filter(spec.commandLine().getParseResult()::hasMatchedOption).toList();
    if (!clusterOnly.isEmpty()) {
      spec.commandLine().getErr().println("shardtrain: " + String.join(", ", clusterOnly) + " set"
          + (clusterOnly.size() == 1 ? "s" : "") + " up a local cluster's parameter blocks (--ps or --trainers above"
          + " 1); a single process has none, so " + (clusterOnly.size() == 1 ? "it is" : "they are") + " ignored here");
    }
    var out = spec.commandLine().getOut();
    if (config.getInt("shardtrain.metrics.port") > 0) {
      spec.commandLine().getErr().println("shardtrain: --metrics-port serves a local cluster's nodes (--ps or"
          + " --trainers above 1); a single process has no node, so it is ignored here");
    }
    var data = DataSets.load(settings.dataset(), settings.dataDir());
    warnIfBatchExceedsData(settings.batch(), data.train().size(), 1);
    LocalRun.Outcome r = run.single(settings, data, profile, profileSkipFirst);
    Map<String, Object> m = r.summary();
    out.printf("%s: %s steps, %.0f samples/s, test accuracy %.4f, training loss %.4f (moving average)%n",
        settings.dataset(), m.get("steps"), m.get("samples_per_sec"), m.get("test_accuracy"), m.get("final_loss"));
    r.profile().forEach(out::println);
    writeOutputs(m, r.metrics(), r.title());
    saveModel(r.model(), settings, data.train(), r.version());
    return 0;
  }

  private void checkProfileSkip(TrainSettings settings) {
    if (profileSkipFirst < 0) {
      throw new IllegalArgumentException("--profile-skip-first must not be negative, got " + profileSkipFirst);
    }
    if (profileSkipFirst == 0) return;
    if (!profile) {
      throw new IllegalArgumentException("--profile-skip-first leaves steps out of --profile's figures; add --profile");
    }
    if (CtrData.isCtr(settings.dataset()) || flags.ps > 0 || trainers > 1) {
      throw new IllegalArgumentException("--profile-skip-first applies to a single process's profile (a dense model,"
          + " no --ps, one trainer); a cluster's profile counts every step");
    }
  }

  private Integer runCtr(LocalRun run, Config config, TrainSettings settings) throws Exception {
    if (settings.resumeFrom() != null) throw new IllegalArgumentException(ShardTrain.CTR_DOES_NOT_RESUME);
    List<String> mlpOnly = new ArrayList<>();
    if (flags.hidden != null) mlpOnly.add("--hidden");
    if (flags.activation != null) mlpOnly.add("--activation");
    if (flags.init != null) mlpOnly.add("--init");
    if (flags.backend != null) mlpOnly.add("--backend");
    if (flags.computeThreads != null) mlpOnly.add("--compute-threads");
    if (!mlpOnly.isEmpty()) {
      throw new IllegalArgumentException(String.join(", ", mlpOnly) + " shape or place an MLP; --dataset "
          + settings.dataset() + " trains a factorization machine (k = shardtrain.train.ctr.factors) on plain"
          + " arrays: leave " + (mlpOnly.size() == 1 ? "it" : "them") + " out");
    }
    CtrSettings ctr = CtrSettings.fromConfig(config);
    boolean cluster = flags.ps > 0 || trainers > 1;
    if (profile && !cluster) {
      spec.commandLine().getErr().println("shardtrain: --profile splits the trainers' steps of a factorization "
          + "machine on a local cluster (--ps or --trainers above 1); its single process runs on plain arrays, not on"
          + " a backend it could time by operation, so it is ignored here");
    }
    if (cluster && LocalRun.blockMode(config) == BlockSpec.Mode.ALLREDUCE) {
      throw new IllegalArgumentException("--mode allreduce trains MLPs; a click-through job's table needs a"
          + " parameter server: use --mode sync or async");
    }
    CtrData data = CtrData.load(settings.dataset(), ctr, settings.seed());
    data.crowdedIdSpace().ifPresent(spec.commandLine().getErr()::println);
    if (cluster) {
      LocalRun.Outcome r = run.clusterCtr(config, settings, ctr, data, flags.ps, trainers, profile, keepsModel());
      Map<String, Object> m = r.summary();
      spec.commandLine().getOut().printf(java.util.Locale.ROOT,
          "%s %s: %s steps per trainer, %.0f samples/s, test_auc %.4f%s, sparse bytes per example:"
              + " pull %.0f, push %.0f%n", settings.dataset(), m.get("mode"), m.get("steps"), m.get("samples_per_sec"),
          m.get("test_auc"), oracle(m, " (oracle %.4f)"), m.get("sparse_pull_bytes_per_example"),
          m.get("sparse_push_bytes_per_example"));
      r.profile().forEach(spec.commandLine().getOut()::println);
      writeOutputs(m, r.metrics(), r.title());
      saveModel(r.fm());
      return 0;
    }
    LocalRun.Outcome r = run.singleCtr(settings, ctr, data, keepsModel());
    Map<String, Object> m = r.summary();
    spec.commandLine().getOut().printf(java.util.Locale.ROOT,
        "%s: %s steps, %.0f samples/s, test_auc %.4f (exact %.4f%s), test log loss %.4f%n",
        settings.dataset(), m.get("steps"), m.get("samples_per_sec"), m.get("test_auc"), m.get("test_auc_exact"),
        oracle(m, ", oracle %.4f"), m.get("test_logloss"));
    writeOutputs(m, r.metrics(), r.title());
    saveModel(r.fm());
    return 0;
  }

  private boolean keepsModel() {
    return saveModel != null || exportNpy != null;
  }

  /** The planted model's AUC in {@code format}, or nothing where the data has no planted model (Criteo's). */
  private static String oracle(Map<String, Object> summary, String format) {
    Object auc = summary.get("oracle_auc");
    return auc instanceof Double d && !d.isNaN() ? String.format(java.util.Locale.ROOT, format, d) : "";
  }

  /** A batch larger than a trainer's share of the data is that share: say so, as the report keeps the flag's value. */
  private void warnIfBatchExceedsData(int batch, int examples, int trainers) {
    int share = (examples + trainers - 1) / trainers;
    if (batch <= share) return;
    spec.commandLine().getErr().println("shardtrain: warning: --batch " + batch + " is more than the " + share
        + " examples " + (trainers == 1 ? "of the training set" : "of each trainer's share of an epoch")
        + ": each step takes them all, a whole " + (trainers == 1 ? "epoch" : "share"));
  }

  private Integer runCluster(LocalRun run, Config config, TrainSettings settings) throws Exception {
    var out = spec.commandLine().getOut();
    // Checked before the data loads and any node starts.
    BlockSpec.Mode mode = LocalRun.blockMode(config);
    flags.layout();
    if (settings.resumeFrom() != null) Resumption.checkBeforeStart(settings.resumeFrom(), mode);
    Backends.create(settings.backend(), settings.computeThreads()).backend().close();
    var data = DataSets.load(settings.dataset(), settings.dataDir());
    warnIfBatchExceedsData(settings.batch(), data.train().size(), trainers);
    LocalRun.Outcome r = run.cluster(config, settings, data, flags.ps, trainers, profile);
    Map<String, Object> m = r.summary();
    out.printf("%s %s: %s steps per trainer, %.0f samples/s, test accuracy %.4f, training loss %.4f (moving average)%n",
        settings.dataset(), m.get("mode"), m.get("steps"), m.get("samples_per_sec"), m.get("test_accuracy"),
        m.get("final_loss"));
    r.profile().forEach(out::println);
    writeOutputs(m, r.metrics(), r.title());
    saveModel(r.model(), settings, data.train(), r.version());
    return 0;
  }

  private void writeOutputs(Map<String, Object> summary, MetricsLog metrics, String title) throws java.io.IOException {
    if (report == null) return;
    var out = spec.commandLine().getOut();
    summary.put("samples_per_sec_second_half", metrics.secondHalfSamplesPerSec());
    summary.put("jit_compile_seconds", metrics.jitSecondsWhileTraining());
    summary.put("process_cpu_seconds", metrics.processCpuSecondsWhileTraining());
    summary.put("jit_cpu_seconds", metrics.jitCpuSecondsWhileTraining());
    Json.writeFile(report, summary);
    String base = report.getFileName().toString().replaceFirst("\\.json$", "");
    Path csv = report.resolveSibling(base + ".csv");
    Path png = report.resolveSibling(base + ".png");
    metrics.writeCsv(csv);
    metrics.writePng(png, title);
    out.println("report: " + report + " (metrics " + csv.getFileName() + ", plot " + png.getFileName() + ")");
  }

  private void saveModel(io.shardtrain.compute.nn.Mlp model, TrainSettings s, io.shardtrain.compute.data.Dataset train,
      long version) throws java.io.IOException {
    if (saveModel == null && exportNpy == null) return;
    Map<String, String> description = new LinkedHashMap<>();
    description.put("model", SavedModels.MLP);
    description.put("inputDim", String.valueOf(train.dim()));
    description.put("hidden", java.util.Arrays.toString(s.hidden()));
    description.put("classes", String.valueOf(train.numClasses()));
    description.put("activation", s.activation());
    Initialization init = s.initialization();
    if (init != Initialization.AUTO) description.put("init", init.label());
    description.put("dataset", s.dataset());
    description.put("seed", String.valueOf(s.seed()));
    saveModel(io.shardtrain.persistence.model.ModelParameters.snapshot(model.parameters(), description, version));
  }

  /** Writes {@code snapshot} where --save-model and --export-npy say. */
  private void saveModel(io.shardtrain.persistence.model.ModelSnapshot snapshot) throws java.io.IOException {
    if (snapshot == null) return;
    var out = spec.commandLine().getOut();
    if (saveModel != null) {
      io.shardtrain.persistence.model.ModelFiles.save(saveModel, snapshot);
      out.println("model: " + saveModel);
    }
    if (exportNpy != null) {
      io.shardtrain.persistence.model.ModelFiles.exportNpy(snapshot, exportNpy);
      out.println("npy: " + exportNpy);
    }
  }
}
