package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.samples.local.LocalCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The training flags that {@code local} and {@code experiment} share, so that a run of an
 * experiment is set up exactly as {@code local} sets up a run with the same flags. The trainer
 * count and the mode are each command's own (one value for {@code local}, lists for
 * {@code experiment}).
 */
final class TrainingFlags {
  @Option(names = "--config", paramLabel = "FILE", description = "HOCON file layered over the defaults.")
  Path config;
  @Option(names = "--dataset", description = "mnist, fashion-mnist, ctr (synthetic clicks) or criteo:PATH (Criteo TSV); the last two "
      + "train a factorization machine" + " (default: ${sys:shardtrain.default.train.dataset}).")
  String dataset;
  @Option(names = "--layout", defaultValue = "colocated", paramLabel = "colocated|separate",
      description = "Local cluster: colocated (node i runs trainer i and holds a share of the blocks) or separate "
          + "(ps nodes, then one node per trainer) (default: ${DEFAULT-VALUE}).")
  String layout;
  @Option(names = "--ps", defaultValue = "0", description = "Parameter-server nodes; 0 with one trainer trains "
      + "in a single process without actors (default: ${DEFAULT-VALUE}).")
  int ps;
  @Option(names = "--max-staleness", description = "Async: refuse pushes whose base version lags more (-1: off) (default: ${sys:shardtrain.default.ps.max-staleness}).")
  Long maxStaleness;
  @Option(names = "--block-size", description = "Floats per parameter block (default: ${sys:shardtrain.default.ps.block-size}).")
  Integer blockSize;
  @Option(names = "--gradient-precision", paramLabel = "fp32|bf16",
      description = "How trainers send gradients to the blocks: fp32, or bf16 (half the bytes, with error "
          + "feedback). Parameters always travel as fp32 (default: ${sys:shardtrain.default.transport.gradient-precision}).")
  String gradientPrecision;
  @Option(names = "--journal", paramLabel = "KIND|URL",
      description = "log (default: append-only files in a fresh directory per run), h2 (a fresh H2 file per run), "
          + "memory, postgres, or a JDBC URL (jdbc:h2:PATH, jdbc:postgresql://HOST:PORT/DB).")
  String journal;
  @Option(names = "--epochs", description = "Passes over the training set (default: ${sys:shardtrain.default.train.epochs}).")
  Integer epochs;
  @Option(names = "--steps", description = "Steps per trainer, instead of epochs (0: by epochs) (default: ${sys:shardtrain.default.train.steps}).")
  Long steps;
  @Option(names = "--hidden", paramLabel = "W1,W2", description = "Hidden layer widths, e.g. 512,256; empty for none (default: ${sys:shardtrain.default.train.hidden}).")
  String hidden;
  @Option(names = "--activation", description = "relu, tanh or sigmoid (default: ${sys:shardtrain.default.train.activation}).")
  String activation;
  @Option(names = "--init", description = "How the MLP's layers start: auto (by activation, biases zero) or pytorch (as torch.nn.Linear) (default: ${sys:shardtrain.default.train.init}).")
  String init;
  @Option(names = "--optimizer", description = "sgd, momentum, nesterov, adam, adamw, adagrad or lars (default: ${sys:shardtrain.default.train.optimizer}).")
  String optimizer;
  @Option(names = "--lr", description = "Base learning rate (default: ${sys:shardtrain.default.train.lr}).")
  Double lr;
  @Option(names = "--lr-schedule", description = "constant, step:SIZE:GAMMA, exp:GAMMA, cosine:TOTAL, warmup:N,<schedule> (default: ${sys:shardtrain.default.train.lr-schedule}).")
  String lrSchedule;
  @Option(names = "--weight-decay", description = "L2 weight decay (default: ${sys:shardtrain.default.train.weight-decay}).")
  Double weightDecay;
  @Option(names = "--batch", description = "Examples per batch, per trainer (default: ${sys:shardtrain.default.train.batch}).")
  Integer batch;
  @Option(names = "--seed", description = "Seed for initialisation and shuffling (default: ${sys:shardtrain.default.train.seed}).")
  Long seed;
  @Option(names = "--eval-every", description = "Evaluate every N steps (0: each epoch) (default: ${sys:shardtrain.default.train.eval-every}).")
  Long evalEvery;
  @Option(names = "--compute-threads", description = "GEMM threads per trainer (default: ${sys:shardtrain.default.compute.threads}).")
  Integer computeThreads;
  @Option(names = "--backend", description = "auto, cpu or cuda (default: ${sys:shardtrain.default.compute.backend}).")
  String backend;
  @Option(names = "--data-dir", description = "Where data sets are cached (default: ${sys:shardtrain.default.data-dir}).")
  Path dataDir;
  @Option(names = "--init-from", paramLabel = "DIR", description = "Start from a saved model (docs/MODEL-FORMAT.md).")
  Path initFrom;
  @Option(names = "--resume-from", paramLabel = "DIR", description = "Continue a sync job from its checkpoint"
      + " (docs/OPERATIONS.md, Resume).")
  Path resumeFrom;
  @Option(names = "--metrics-port", paramLabel = "PORT", description = "Local cluster: node i serves its meters in"
      + " Prometheus' text format at http://127.0.0.1:PORT+i/metrics while it runs (0: none)"
      + " (default: ${sys:shardtrain.default.metrics.port}).")
  Integer metricsPort;
  @Option(names = "--no-progress", description = "No progress bar.")
  boolean noProgress;

  /**
   * The HOCON defaults, the {@code --config} file and these flags layered, validated;
   * {@code mode}: sync, async or allreduce, or null for the configured one.
   */
  Config effectiveConfig(String mode) {
    Map<String, Object> flags = new HashMap<>();
    put(flags, "train.dataset", dataset);
    put(flags, "train.epochs", epochs);
    put(flags, "train.steps", steps);
    if (steps != null && epochs == null) put(flags, "train.epochs", 0);
    if (hidden != null) flags.put("shardtrain.train.hidden", toList(TrainSettings.parseHidden(hidden)));
    put(flags, "train.activation", activation);
    put(flags, "train.init", init);
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
    put(flags, "metrics.port", metricsPort);
    if (!journalIsUrl()) put(flags, "persistence.journal", journal);
    if (dataDir != null) put(flags, "data-dir", dataDir.toAbsolutePath().toString());
    if (initFrom != null) put(flags, "train.init-from", initFrom.toAbsolutePath().toString());
    if (resumeFrom != null) put(flags, "train.resume-from", resumeFrom.toAbsolutePath().toString());
    Config files = ShardTrainConfig.load(config);
    Config merged = ConfigFactory.parseMap(flags, "command-line flags");
    if (journalIsUrl()) merged = merged.withFallback(JournalConfig.forUrl(journal));
    merged = merged.withFallback(files);
    ShardTrainConfig.validate(merged);
    return merged;
  }

  /** A journal given as a JDBC URL is the user's to keep; any other kind gets a fresh file per run. */
  boolean journalIsUrl() {
    return journal != null && journal.startsWith("jdbc:");
  }

  LocalCluster.Layout layout() {
    try {
      return LocalCluster.Layout.valueOf(layout.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--layout must be colocated or separate, got '" + layout + "'");
    }
  }

  /**
   * A warning where {@code trainers} trainers of {@code threads} compute threads each ask for more
   * threads than this machine has cores, else nothing. One trainer's threads meet several times a
   * step, so a thread that waits for a core holds up the others.
   */
  static java.util.Optional<String> oversubscribed(int threads, int trainers, String backend) {
    int cores = Runtime.getRuntime().availableProcessors();
    if (threads <= 1 || "cuda".equalsIgnoreCase(backend) || (long) threads * trainers <= cores) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(String.format(Locale.ROOT, "shardtrain: %d compute threads for each of %d"
        + " trainer(s) on %d cores: a step's threads would wait for each other's cores, which trains slower than"
        + " fewer threads; use at most %d", threads, trainers, cores, Math.max(1, cores / trainers)));
  }

  private static void put(Map<String, Object> m, String key, Object v) {
    if (v != null) m.put("shardtrain." + key, v);
  }

  private static List<Integer> toList(int[] a) {
    List<Integer> l = new ArrayList<>();
    for (int v : a) l.add(v);
    return l;
  }
}
