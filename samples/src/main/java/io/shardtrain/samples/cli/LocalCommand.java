package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.FileTrees;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.persistence.journal.JournalSettings;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.local.DistributedTraining;
import io.shardtrain.samples.local.LocalCluster;
import io.shardtrain.samples.local.SingleProcessTraining;
import io.shardtrain.samples.report.Json;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProfileReport;
import io.shardtrain.samples.report.ProgressBar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code shardtrain local}: a training job on this machine, with the embedded defaults. */
@Command(name = "local", mixinStandardHelpOptions = true,
    description = "Train on this machine. Flags override the HOCON settings (shardtrain.train.*).")
final class LocalCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Option(names = "--config", paramLabel = "FILE", description = "HOCON file layered over the defaults.")
  Path config;
  @Option(names = "--dataset", description = "mnist or fashion-mnist (default: ${DEFAULT-VALUE} from config).")
  String dataset;
  @Option(names = "--trainers", defaultValue = "1",
      description = "Trainers (default: ${DEFAULT-VALUE}).")
  int trainers;
  @Option(names = "--layout", defaultValue = "colocated", paramLabel = "colocated|separate",
      description = "Local cluster: colocated (node i runs trainer i and holds a share of the blocks) or separate "
          + "(ps nodes, then one node per trainer) (default: ${DEFAULT-VALUE}).")
  String layout;
  @Option(names = "--ps", defaultValue = "0", description = "Parameter-server nodes; 0 with one trainer trains "
      + "in a single process without actors (default: ${DEFAULT-VALUE}).")
  int ps;
  @Option(names = "--mode", description = "sync or async (default from shardtrain.train.mode).")
  String mode;
  @Option(names = "--max-staleness", description = "Async: refuse pushes whose base version lags more (-1: off).")
  Long maxStaleness;
  @Option(names = "--block-size", description = "Floats per parameter block.")
  Integer blockSize;
  @Option(names = "--gradient-precision", paramLabel = "fp32|bf16",
      description = "How trainers send gradients to the blocks: fp32, or bf16 (half the bytes, with error "
          + "feedback). Parameters always travel as fp32.")
  String gradientPrecision;
  @Option(names = "--journal", paramLabel = "KIND|URL",
      description = "h2 (default: a fresh file per run), memory, postgres, or a JDBC URL (jdbc:h2:PATH, "
          + "jdbc:postgresql://HOST:PORT/DB).")
  String journal;
  @Option(names = "--epochs", description = "Passes over the training set.")
  Integer epochs;
  @Option(names = "--steps", description = "Steps per trainer, instead of epochs.")
  Long steps;
  @Option(names = "--hidden", paramLabel = "W1,W2", description = "Hidden layer widths, e.g. 512,256.")
  String hidden;
  @Option(names = "--activation", description = "relu, tanh or sigmoid.")
  String activation;
  @Option(names = "--optimizer", description = "sgd, momentum, nesterov, adam, adamw, adagrad or lars.")
  String optimizer;
  @Option(names = "--lr", description = "Base learning rate.")
  Double lr;
  @Option(names = "--lr-schedule", description = "constant, step:SIZE:GAMMA, exp:GAMMA, cosine:TOTAL, warmup:N,<schedule>.")
  String lrSchedule;
  @Option(names = "--weight-decay", description = "L2 weight decay.")
  Double weightDecay;
  @Option(names = "--batch", description = "Examples per batch, per trainer.")
  Integer batch;
  @Option(names = "--seed", description = "Seed for initialisation and shuffling.")
  Long seed;
  @Option(names = "--eval-every", description = "Evaluate every N steps (0: each epoch).")
  Long evalEvery;
  @Option(names = "--compute-threads", description = "GEMM threads per trainer.")
  Integer computeThreads;
  @Option(names = "--backend", description = "auto, cpu or cuda.")
  String backend;
  @Option(names = "--data-dir", description = "Where data sets are cached.")
  Path dataDir;
  @Option(names = "--report", paramLabel = "FILE", description = "Write a JSON report here.")
  Path report;
  @Option(names = "--init-from", paramLabel = "DIR", description = "Start from a saved model (docs/MODEL-FORMAT.md).")
  Path initFrom;
  @Option(names = "--save-model", paramLabel = "DIR", description = "Save the trained model here.")
  Path saveModel;
  @Option(names = "--export-npy", paramLabel = "DIR", description = "Also write the trained parameters as NumPy .npy files.")
  Path exportNpy;
  @Option(names = "--no-progress", description = "No progress bar.")
  boolean noProgress;
  @Option(names = "--profile", description = "Local cluster: print where each trainer's step time went (compute, "
      + "waiting for pushes, pulls and the master, other) and the cluster's serialization time; the report gets "
      + "a profile object.")
  boolean profile;

  @Override
  public Integer call() throws Exception {
    if (trainers < 1) throw new IllegalArgumentException("--trainers must be at least 1, got " + trainers);
    if (ps < 0) throw new IllegalArgumentException("--ps must not be negative, got " + ps);
    Config config = effectiveConfig();
    TrainSettings settings = TrainSettings.fromConfig(config);
    // Read here too, so a bad value fails before any node starts.
    WirePrecision precision = WirePrecision.gradientsFromConfig(config);
    if (ps > 0 || trainers > 1) return runCluster(config, settings);
    if (precision != WirePrecision.FP32) {
      spec.commandLine().getErr().println("shardtrain: --gradient-precision applies to gradients sent to "
          + "parameter blocks (--ps or --trainers above 1); a single process sends none, so it is ignored here");
    }
    var choice = Backends.create(settings.backend(), settings.computeThreads());
    var out = spec.commandLine().getOut();
    if (profile) {
      spec.commandLine().getErr().println("shardtrain: --profile splits the steps of a local cluster's trainers "
          + "(--ps or --trainers above 1); a single process has nothing to wait for, so it is ignored here");
    }
    spec.commandLine().getErr().println("shardtrain: backend " + choice.backend().name() + " (" + choice.reason() + "), "
        + settings.computeThreads() + " compute thread(s)");
    var data = DataSets.load(settings.dataset(), settings.dataDir());
    long total = settings.stepsPerTrainer(data.train().size(), 1);
    ProgressBar progress = noProgress ? ProgressBar.messagesOnly(System.err) : ProgressBar.forTerminal(total);
    SingleProcessTraining.Result r;
    MetricsLog metrics = new MetricsLog();
    try (var backendToClose = choice.backend()) {
      r = new SingleProcessTraining(settings, choice.backend(), progress, metrics).run(data.train(), data.test());
    }
    out.printf("%s: %d steps, %.0f samples/s, test accuracy %.4f, final loss %.4f%n",
        settings.dataset(), r.steps(), r.samplesPerSec(), r.testAccuracy(), r.finalLoss());
    writeOutputs(report(settings, r), metrics, settings.dataset() + " single process");
    saveModel(r.model(), settings, data.train(), r.steps());
    return 0;
  }

  Config effectiveConfig() {
    Map<String, Object> flags = new HashMap<>();
    put(flags, "train.dataset", dataset);
    put(flags, "train.epochs", epochs);
    put(flags, "train.steps", steps);
    if (steps != null && epochs == null) put(flags, "train.epochs", 0);
    if (hidden != null) flags.put("shardtrain.train.hidden", toList(TrainSettings.parseHidden(hidden)));
    put(flags, "train.activation", activation);
    put(flags, "train.optimizer", optimizer);
    put(flags, "train.lr", lr);
    put(flags, "train.lr-schedule", lrSchedule);
    put(flags, "train.weight-decay", weightDecay);
    put(flags, "train.batch", batch);
    put(flags, "train.seed", seed);
    put(flags, "train.eval-every", evalEvery);
    put(flags, "compute.threads", computeThreads);
    put(flags, "compute.backend", backend);
    put(flags, "train.mode", mode);
    put(flags, "ps.max-staleness", maxStaleness);
    put(flags, "ps.block-size", blockSize);
    put(flags, "transport.gradient-precision", gradientPrecision);
    if (!journalIsUrl()) put(flags, "persistence.journal", journal);
    if (dataDir != null) put(flags, "data-dir", dataDir.toAbsolutePath().toString());
    if (initFrom != null) put(flags, "train.init-from", initFrom.toAbsolutePath().toString());
    Config files = ShardTrainConfig.load(config);
    Config merged = ConfigFactory.parseMap(flags, "command-line flags");
    if (journalIsUrl()) merged = merged.withFallback(JournalConfig.forUrl(journal));
    merged = merged.withFallback(files);
    ShardTrainConfig.validate(merged);
    return merged;
  }

  private boolean journalIsUrl() {
    return journal != null && journal.startsWith("jdbc:");
  }

  private static void put(Map<String, Object> m, String key, Object v) {
    if (v != null) m.put("shardtrain." + key, v);
  }

  private static List<Integer> toList(int[] a) {
    List<Integer> l = new ArrayList<>();
    for (int v : a) l.add(v);
    return l;
  }

  private Integer runCluster(Config config, TrainSettings settings) throws Exception {
    var out = spec.commandLine().getOut();
    String modeName = config.getString("shardtrain.train.mode").toUpperCase(java.util.Locale.ROOT);
    BlockSpec.Mode blockMode;
    try {
      blockMode = BlockSpec.Mode.valueOf(modeName);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--mode must be sync or async, got '" + modeName.toLowerCase() + "'");
    }
    LocalCluster.Layout nodeLayout;
    try {
      nodeLayout = LocalCluster.Layout.valueOf(layout.trim().toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--layout must be colocated or separate, got '" + layout + "'");
    }
    Backends.create(settings.backend(), settings.computeThreads()).backend().close();
    var data = DataSets.load(settings.dataset(), settings.dataDir());
    // Each local run journals into a fresh H2 file, so runs never see each other's blocks; a
    // journal given as a URL is the user's to keep.
    Path journalDir = journalIsUrl() ? null
        : settings.dataDir().resolve("journal").resolve("local-" + System.currentTimeMillis());
    Config runConfig = journalDir == null ? config.resolve() : ConfigFactory.parseMap(Map.of("shardtrain.persistence.h2-path",
        journalDir.resolve("shardtrain").toAbsolutePath().toString())).withFallback(config).resolve();
    PsSettings psSettings = PsSettings.fromConfig(runConfig);
    int psNodes = Math.max(1, ps);
    spec.commandLine().getErr().printf("shardtrain: local cluster of %d ps and %d trainer(s) on %d node(s) (%s), "
        + "%s mode, %s journal%n", psNodes, trainers,
        nodeLayout == LocalCluster.Layout.COLOCATED ? Math.max(psNodes, trainers) : psNodes + trainers,
        nodeLayout.name().toLowerCase(java.util.Locale.ROOT), modeName.toLowerCase(),
        runConfig.getString("shardtrain.persistence.journal"));
    MetricsLog metrics = new MetricsLog();
    long stepsPerTrainer = settings.stepsPerTrainer(data.train().size(), trainers);
    ProgressBar progress = noProgress ? ProgressBar.messagesOnly(System.err)
        : ProgressBar.forTerminal(stepsPerTrainer * trainers);
    DistributedTraining.Result r;
    long journalBytes;
    try (LocalCluster cluster = LocalCluster.start("shardtrain", psNodes, trainers, runConfig, Duration.ofSeconds(60),
        nodeLayout)) {
      r = new DistributedTraining(settings, blockMode, psSettings.blockSize(), psSettings.maxStaleness(), progress,
          metrics, profile).run(cluster, data.train(), data.test());
      journalBytes = Journal.journalBytes(JournalSettings.fromConfig(runConfig));
    } finally {
      if (journalDir != null) FileTrees.delete(journalDir);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", modeName.toLowerCase());
    m.put("dataset", settings.dataset());
    m.put("trainers", trainers);
    m.put("ps", psNodes);
    m.put("blocks", r.job().blocks().size());
    m.put("epochs", r.job().steps() > 0 ? 0 : r.job().epochs());
    m.put("steps", r.steps());
    putSettings(m, settings);
    m.put("journal", runConfig.getString("shardtrain.persistence.journal"));
    putResult(m, r.samples(), r.samplesPerSec(), r.trainSeconds(), r.wallSeconds(), r.testAccuracy(), r.finalLoss());
    m.put("version", r.version());
    m.put("pushes", r.pushes());
    m.put("pulls", r.pulls());
    m.put("stale_pushes", r.stalePushes());
    m.put("journal_bytes", journalBytes);
    out.printf("%s %s: %d steps per trainer, %.0f samples/s, test accuracy %.4f, final loss %.4f%n",
        settings.dataset(), modeName.toLowerCase(), r.steps(), r.samplesPerSec(), r.testAccuracy(), r.finalLoss());
    if (profile) {
      ProfileReport p = new ProfileReport(r.profiles(), r.wire());
      p.lines().forEach(out::println);
      m.put("profile", p.json());
    }
    writeOutputs(m, metrics, settings.dataset() + " " + modeName.toLowerCase() + ", " + trainers + " trainers");
    saveModel(r.model(), settings, data.train(), r.version());
    return 0;
  }

  private void writeOutputs(Map<String, Object> summary, MetricsLog metrics, String title) throws java.io.IOException {
    if (report == null) return;
    var out = spec.commandLine().getOut();
    summary.put("samples_per_sec_second_half", metrics.secondHalfSamplesPerSec());
    Path parent = report.toAbsolutePath().getParent();
    if (parent != null) Files.createDirectories(parent);
    Files.writeString(report, Json.write(summary));
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
    description.put("model", "mlp");
    description.put("inputDim", String.valueOf(train.dim()));
    description.put("hidden", java.util.Arrays.toString(s.hidden()));
    description.put("classes", String.valueOf(train.numClasses()));
    description.put("activation", s.activation());
    description.put("dataset", s.dataset());
    var snapshot = io.shardtrain.persistence.model.ModelParameters.snapshot(model.parameters(), description, version);
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

  /** The report fields that say how the job was set up (the same in every mode). */
  private static void putSettings(Map<String, Object> m, TrainSettings s) {
    m.put("batch", s.batch());
    m.put("hidden", s.hidden());
    m.put("optimizer", s.optimizer());
    m.put("lr", s.lr());
    m.put("seed", s.seed());
    m.put("compute_threads", s.computeThreads());
    m.put("backend", s.backend());
  }

  /** The report fields every mode measures. */
  private static void putResult(Map<String, Object> m, long samples, double samplesPerSec, double trainSeconds,
      double wallSeconds, double testAccuracy, double finalLoss) {
    m.put("samples", samples);
    m.put("samples_per_sec", samplesPerSec);
    m.put("train_seconds", trainSeconds);
    m.put("wall_seconds", wallSeconds);
    m.put("test_accuracy", testAccuracy);
    m.put("final_loss", finalLoss);
  }

  private Map<String, Object> report(TrainSettings s, SingleProcessTraining.Result r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", "single");
    m.put("dataset", s.dataset());
    m.put("trainers", 1);
    m.put("epochs", r.epochs());
    m.put("steps", r.steps());
    putSettings(m, s);
    putResult(m, r.samples(), r.samplesPerSec(), r.trainSeconds(), r.wallSeconds(), r.testAccuracy(), r.finalLoss());
    List<Object> evals = new ArrayList<>();
    for (var e : r.evaluations()) {
      Map<String, Object> em = new LinkedHashMap<>();
      em.put("step", e.step());
      em.put("epoch", e.epoch());
      em.put("train_loss", e.trainLoss());
      em.put("test_accuracy", e.testAccuracy());
      evals.add(em);
    }
    m.put("evaluations", evals);
    return m;
  }
}
