package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.local.SingleProcessTraining;
import io.shardtrain.samples.report.Json;
import io.shardtrain.samples.report.ProgressBar;
import java.nio.file.Files;
import java.nio.file.Path;
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
  @Option(names = "--trainers", defaultValue = "1", description = "Trainers (default: ${DEFAULT-VALUE}).")
  int trainers;
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
  @Option(names = "--no-progress", description = "No progress bar.")
  boolean noProgress;

  @Override
  public Integer call() throws Exception {
    if (trainers != 1) {
      throw new IllegalArgumentException("--trainers " + trainers
          + ": this build trains in a single process only (--trainers 1)");
    }
    TrainSettings settings = TrainSettings.fromConfig(effectiveConfig());
    var choice = Backends.create(settings.backend(), settings.computeThreads());
    var out = spec.commandLine().getOut();
    spec.commandLine().getErr().println("shardtrain: backend " + choice.backend().name() + " (" + choice.reason() + "), "
        + settings.computeThreads() + " compute thread(s)");
    var data = DataSets.load(settings.dataset(), settings.dataDir());
    long total = settings.steps() > 0 ? settings.steps()
        : (long) Math.ceil((double) data.train().size() / settings.batch()) * settings.epochs();
    ProgressBar progress = noProgress ? ProgressBar.messagesOnly(System.err) : ProgressBar.forTerminal(total);
    SingleProcessTraining.Result r;
    try (var backendToClose = choice.backend()) {
      r = new SingleProcessTraining(settings, choice.backend(), progress).run(data.train(), data.test());
    }
    Map<String, Object> summary = report(settings, r);
    out.printf("%s: %d steps, %.0f samples/s, test accuracy %.4f, final loss %.4f%n",
        settings.dataset(), r.steps(), r.samplesPerSec(), r.testAccuracy(), r.finalLoss());
    if (report != null) {
      Path parent = report.toAbsolutePath().getParent();
      if (parent != null) Files.createDirectories(parent);
      Files.writeString(report, Json.write(summary));
      out.println("report: " + report);
    }
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
    if (dataDir != null) put(flags, "data-dir", dataDir.toAbsolutePath().toString());
    Config files = ShardTrainConfig.load(config);
    Config merged = ConfigFactory.parseMap(flags, "command-line flags").withFallback(files);
    ShardTrainConfig.validate(merged);
    return merged;
  }

  private static void put(Map<String, Object> m, String key, Object v) {
    if (v != null) m.put("shardtrain." + key, v);
  }

  private static List<Integer> toList(int[] a) {
    List<Integer> l = new ArrayList<>();
    for (int v : a) l.add(v);
    return l;
  }

  private Map<String, Object> report(TrainSettings s, SingleProcessTraining.Result r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", "single");
    m.put("dataset", s.dataset());
    m.put("trainers", 1);
    m.put("epochs", r.epochs());
    m.put("steps", r.steps());
    m.put("batch", s.batch());
    m.put("hidden", s.hidden());
    m.put("optimizer", s.optimizer());
    m.put("lr", s.lr());
    m.put("seed", s.seed());
    m.put("compute_threads", s.computeThreads());
    m.put("backend", s.backend());
    m.put("samples", r.samples());
    m.put("samples_per_sec", r.samplesPerSec());
    m.put("train_seconds", r.trainSeconds());
    m.put("wall_seconds", r.wallSeconds());
    m.put("test_accuracy", r.testAccuracy());
    m.put("final_loss", r.finalLoss());
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
