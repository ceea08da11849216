package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.sparse.RowsExport;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.FileTrees;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.compute.backend.TimedBackend;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalSettings;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.CtrTraining;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.local.DistributedCtrTraining;
import io.shardtrain.samples.local.DistributedTraining;
import io.shardtrain.samples.local.LocalCluster;
import io.shardtrain.samples.local.SingleProcessTraining;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProfileReport;
import io.shardtrain.samples.report.ProgressBar;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One training run on this machine as {@code local} runs it: in a single process without actors,
 * or on a fresh local cluster that is shut down when the run ends. {@code experiment} runs its
 * matrix through here, one run after another, so each of its runs is the {@code local} run with
 * the same flags.
 */
final class LocalRun {

  /**
   * What a run produced: {@code summary}, the fields of {@code local}'s JSON report;
   * {@code bytesSent}, the bytes the nodes sent while the trainers ran, -1 when not counted (a
   * single process sends none: 0); {@code profile}, the lines {@code --profile} prints, empty when the
   * run was not profiled; {@code fm}, a click-through model when it is to be saved (else null).
   */
  record Outcome(Map<String, Object> summary, MetricsLog metrics, Mlp model, long version, String title,
      long bytesSent, List<String> profile, ModelSnapshot fm) {}

  private final TrainingFlags flags;
  private final PrintWriter err;

  LocalRun(TrainingFlags flags, PrintWriter err) {
    this.flags = flags;
    this.err = err;
  }

  /** The mode of the blocks that {@code config} names. */
  static BlockSpec.Mode blockMode(Config config) {
    try {
      return BlockSpec.Mode.parse(config.getString("shardtrain.train.mode"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--mode or shardtrain.train.mode: " + e.getMessage());
    }
  }

  /** Trains one model in this process. */
  Outcome single(TrainSettings settings, DataSets.TrainTest data) {
    return single(settings, data, false, 0);
  }

  /**
   * Trains one model in this process; {@code profile}: time the steps by backend operation (the
   * CPU backend's only, see {@link TimedBackend}), all but the first {@code profileSkip}.
   */
  Outcome single(TrainSettings settings, DataSets.TrainTest data, boolean profile, long profileSkip) {
    checkModelFits(modelFloats(settings, data), 0, Runtime.getRuntime().maxMemory());
    var choice = Backends.create(settings.backend(), settings.computeThreads());
    err.println("shardtrain: backend " + choice.backend().name() + " (" + choice.reason() + "), "
        + settings.computeThreads() + " compute thread(s)");
    Backend backend = choice.backend();
    if (profile && !TimedBackend.canTime(backend)) {
      err.println("shardtrain: --profile splits a single process's steps by operation on the cpu backend only; the "
          + backend.name() + " backend runs its operations asynchronously on its device, so a clock around each"
          + " would time their launches: this run is not profiled");
    } else if (profile) {
      backend = TimedBackend.wrap(backend);
    }
    long total = settings.stepsPerTrainer(data.train().size(), 1);
    ProgressBar progress = flags.noProgress ? ProgressBar.messagesOnly(System.err) : ProgressBar.forTerminal(total);
    SingleProcessTraining.Result r;
    MetricsLog metrics = new MetricsLog();
    try (var backendToClose = backend) {
      r = new SingleProcessTraining(settings, backend, progress, metrics, profileSkip).run(data.train(), data.test());
    }
    Map<String, Object> m = report(settings, r);
    if (r.profile() != null) m.put("profile", r.profile().json());
    return new Outcome(m, metrics, r.model(), r.steps(), settings.dataset() + " single process", 0,
        r.profile() == null ? List.of() : r.profile().lines(), null);
  }

  /** Trains a factorization machine on click-through data in this process. */
  Outcome singleCtr(TrainSettings settings, CtrSettings ctr, CtrData data, boolean keepModel) {
    err.println("shardtrain: factorization machine, k = " + ctr.factors() + ", " + data.train().size()
        + " training and " + data.test().size() + " test examples, " + data.train().fields() + " categorical and "
        + data.train().denseDim() + " dense features, " + data.train().hashSpace() + "-row id space");
    long total = settings.stepsPerTrainer(data.train().size(), 1);
    ProgressBar progress = flags.noProgress ? ProgressBar.messagesOnly(System.err) : ProgressBar.forTerminal(total);
    MetricsLog metrics = new MetricsLog();
    CtrTraining.Result r = new CtrTraining(settings, ctr, progress, metrics).run(data.train(), data.test());
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", "single");
    m.put("dataset", settings.dataset());
    m.put("model", "fm");
    m.put("factors", ctr.factors());
    m.put("trainers", 1);
    m.put("steps", r.steps());
    m.put("batch", settings.batch());
    putCtrSetup(m, settings, ctr, data);
    putRates(m, r.samples(), r.samplesPerSec(), r.trainSeconds(), r.wallSeconds());
    m.put("test_auc", r.testAuc());
    m.put("test_auc_exact", r.testAucExact());
    m.put("oracle_auc", data.oracleAuc());
    m.put("test_logloss", r.testLogLoss());
    m.put("final_loss", r.finalLoss());
    m.put("distinct_rows_per_example", r.distinctRowsPerExample());
    m.put("table_rows", r.tableRows());
    ModelSnapshot fm = null;
    if (keepModel) {
      RowsExport.Page rows = RowsExport.all(r.table());
      fm = CtrTraining.model(data.train(), ctr).snapshot(null, settings.dataset(), settings.seed(),
          settings.optimizer(), r.steps(), r.dense(), rows.ids(), rows.values());
    }
    return new Outcome(m, metrics, null, r.steps(), settings.dataset() + " factorization machine, single process", 0,
        List.of(), fm);
  }

  /**
   * Trains on a fresh local cluster of {@code ps} parameter-server and {@code trainers} trainer
   * roles; {@code timeWire}: count serialization time and bytes sent while the trainers run.
   */
  Outcome cluster(Config config, TrainSettings settings, DataSets.TrainTest data, int ps, int trainers,
      boolean timeWire) throws Exception {
    BlockSpec.Mode blockMode = blockMode(config);
    String modeName = blockMode.name().toLowerCase(Locale.ROOT);
    LocalCluster.Layout nodeLayout = flags.layout();
    Path journalDir = journalDir(settings);
    Config runConfig = runConfig(config, journalDir);
    PsSettings psSettings = PsSettings.fromConfig(runConfig);
    JournalSettings journal = JournalSettings.fromConfig(runConfig);
    long modelFloats = modelFloats(settings, data);
    checkModelFits(modelFloats, trainers, Runtime.getRuntime().maxMemory());
    if (journal.kind() == JournalSettings.Kind.MEMORY) {
      checkMemoryJournal(psSettings, modelFloats, Runtime.getRuntime().maxMemory());
    }
    int psNodes = Math.max(1, ps);
    err.printf("shardtrain: local cluster of %d ps and %d trainer(s) on %d node(s) (%s), %s mode, %s journal%n",
        psNodes, trainers, nodeLayout == LocalCluster.Layout.COLOCATED ? Math.max(psNodes, trainers) : psNodes + trainers,
        nodeLayout.name().toLowerCase(Locale.ROOT), modeName, runConfig.getString("shardtrain.persistence.journal"));
    printMetricsPorts(runConfig, nodeLayout == LocalCluster.Layout.COLOCATED ? Math.max(psNodes, trainers)
        : psNodes + trainers);
    MetricsLog metrics = new MetricsLog();
    long stepsPerTrainer = settings.stepsPerTrainer(data.train().size(), trainers);
    ProgressBar progress = flags.noProgress ? ProgressBar.messagesOnly(System.err)
        : ProgressBar.forTerminal(stepsPerTrainer * trainers);
    DistributedTraining.Result r;
    long journalBytes;
    try (AutoCloseable journalFiles = deletedAtEnd(journalDir);
        LocalCluster cluster = LocalCluster.start("shardtrain", psNodes, trainers, runConfig, Duration.ofSeconds(60),
            nodeLayout)) {
      r = new DistributedTraining(settings, blockMode, psSettings.blockSize(), psSettings.maxStaleness(), progress,
          metrics, timeWire).run(cluster, data.train(), data.test());
      journalBytes = Journal.journalBytes(journal);
    }
    // DistributedTraining counted from the trainers' start to their end; nothing counts after it.
    long bytesSent = timeWire ? WireTimings.bytesSent() : -1;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", modeName);
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
    ProfileReport profile = null;
    if (timeWire) {
      m.put("bytes_sent", bytesSent);
      profile = new ProfileReport(r.profiles(), r.wire());
      m.put("profile", profile.json());
    }
    return new Outcome(m, metrics, r.model(), r.version(),
        settings.dataset() + " " + modeName + ", " + trainers + " trainers", bytesSent,
        profile == null ? List.of() : profile.lines(), null);
  }

  private static long modelFloats(TrainSettings settings, DataSets.TrainTest data) {
    return Mlp.parameterCount(data.train().dim(), settings.hidden(), data.train().numClasses());
  }

  /**
   * Refuses, before the model is made, a model this JVM cannot hold: its values, gradients and up
   * to two optimizer slots (Adam's), and on a local cluster ({@code trainers} above 0, all in this
   * JVM) each trainer's values, gradients and the copy its pushes keep. It would end in an
   * {@link OutOfMemoryError} partway through.
   */
  static void checkModelFits(long modelFloats, int trainers, long maxHeap) {
    long needed = (4L + 3L * trainers) * modelFloats * Float.BYTES;
    if (needed > maxHeap) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, "the model's %d floats need about %.2f GB here"
          + " (values, gradients and optimizer slots%s), more than the JVM's %.2f GB heap; use narrower --hidden"
          + " layers or a larger heap (SHARDTRAIN_JAVA_OPTS=-Xmx...)", modelFloats, needed / 1e9,
          trainers > 0 ? ", and each of " + trainers + " trainers' copies" : "", maxHeap / 1e9));
    }
  }

  /**
   * Refuses, before any node starts, a run whose memory journal could hold more than half of
   * {@code maxHeap} (the trainers' models, the data and the messages in flight need the rest): it
   * would end in an {@link OutOfMemoryError} partway through.
   */
  static void checkMemoryJournal(PsSettings ps, long modelFloats, long maxHeap) {
    // Two snapshots a block, serialized: its values and at most two optimizer slots (Adam's).
    long held = ps.heldEventBytes(modelFloats) + 2L * 3 * modelFloats * Float.BYTES;
    if (held > maxHeap / 2) {
      throw new IllegalArgumentException(String.format(Locale.ROOT,
          "the memory journal keeps up to 2 x shardtrain.ps.snapshot-every (%d) events and 2 snapshots of"
              + " every block in the heap: %.2f GB for this model's %d floats, more than half of the JVM's %.2f GB"
              + " heap; use the default log journal, a smaller snapshot-every, or a larger heap"
              + " (SHARDTRAIN_JAVA_OPTS=-Xmx...)",
          ps.snapshotEvery(), held / 1e9, modelFloats, maxHeap / 1e9));
    }
  }

  /**
   * Each local run journals into a fresh directory (the log's, or an H2 file's), so runs never see
   * each other's blocks; a journal given as a URL is the user's to keep (null).
   */
  private Path journalDir(TrainSettings settings) {
    return flags.journalIsUrl() ? null
        : settings.dataDir().resolve("journal").resolve("local-" + System.currentTimeMillis());
  }

  /**
   * Deletes a run's journal directory when closed after the cluster, or when the JVM exits first:
   * Ctrl-C ends a run between two steps, and its journal (hundreds of MB) would stay behind.
   * Nothing to delete for null.
   */
  private static AutoCloseable deletedAtEnd(Path dir) {
    if (dir == null) return () -> {};
    Thread atExit = new Thread(() -> {
      try {
        FileTrees.delete(dir);
      } catch (java.io.IOException | RuntimeException e) {
        System.err.println("shardtrain: could not delete the run's journal " + dir + ": " + e.getMessage());
      }
    }, "shardtrain-journal-cleanup");
    Runtime.getRuntime().addShutdownHook(atExit);
    return () -> {
      try {
        Runtime.getRuntime().removeShutdownHook(atExit);
      } catch (IllegalStateException exiting) {
        return; // the hook deletes it
      }
      FileTrees.delete(dir);
    };
  }

  private static Config runConfig(Config config, Path journalDir) {
    return journalDir == null ? config.resolve() : ConfigFactory.parseMap(Map.of(
        "shardtrain.persistence.h2-path", journalDir.resolve("shardtrain").toAbsolutePath().toString(),
        "shardtrain.persistence.log-dir", journalDir.resolve("log").toAbsolutePath().toString()))
        .withFallback(config).resolve();
  }

  /**
   * Trains a factorization machine on click-through data on a fresh local cluster; {@code timeWire}:
   * profile the trainers' steps and count serialization time while they run.
   */
  Outcome clusterCtr(Config config, TrainSettings settings, CtrSettings ctr, CtrData data, int ps, int trainers,
      boolean timeWire, boolean keepModel) throws Exception {
    BlockSpec.Mode blockMode = blockMode(config);
    String modeName = blockMode.name().toLowerCase(Locale.ROOT);
    Path journalDir = journalDir(settings);
    Config runConfig = runConfig(config, journalDir);
    PsSettings psSettings = PsSettings.fromConfig(runConfig);
    int psNodes = Math.max(1, ps);
    err.printf("shardtrain: factorization machine (k = %d) on a local cluster of %d ps and %d trainer(s), %s mode,"
        + " %s journal%n", ctr.factors(), psNodes, trainers, modeName, runConfig.getString("shardtrain.persistence.journal"));
    printMetricsPorts(runConfig, flags.layout() == LocalCluster.Layout.COLOCATED ? Math.max(psNodes, trainers)
        : psNodes + trainers);
    MetricsLog metrics = new MetricsLog();
    ProgressBar progress = flags.noProgress ? ProgressBar.messagesOnly(System.err)
        : ProgressBar.forTerminal(settings.stepsPerTrainer(data.train().size(), trainers) * trainers);
    DistributedCtrTraining.Result r;
    try (AutoCloseable journalFiles = deletedAtEnd(journalDir);
        LocalCluster cluster = LocalCluster.start("shardtrain", psNodes, trainers, runConfig, Duration.ofSeconds(60),
            flags.layout())) {
      r = new DistributedCtrTraining(settings, ctr, blockMode, psSettings.blockSize(), psSettings.maxStaleness(),
          progress, metrics, timeWire).run(cluster, data.train(), data.test(), keepModel);
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("mode", modeName);
    m.put("dataset", settings.dataset());
    m.put("model", "fm");
    m.put("factors", ctr.factors());
    m.put("trainers", trainers);
    m.put("ps", psNodes);
    m.put("table_shards", r.job().ctr().tableShards());
    m.put("steps", r.steps());
    m.put("batch", settings.batch());
    m.put("journal", runConfig.getString("shardtrain.persistence.journal"));
    putCtrSetup(m, settings, ctr, data);
    putRates(m, r.samples(), r.samplesPerSec(), r.trainSeconds(), r.wallSeconds());
    m.put("test_auc", r.testAuc());
    m.put("test_auc_examples", r.testAucExamples());
    m.put("oracle_auc", data.oracleAuc());
    m.put("final_loss", r.finalLoss());
    m.put("sparse_pull_bytes_per_example", r.pullBytesPerExample());
    m.put("sparse_push_bytes_per_example", r.pushBytesPerExample());
    ProfileReport profile = null;
    if (timeWire) {
      profile = new ProfileReport(r.profiles(), r.wire());
      m.put("profile", profile.json());
    }
    return new Outcome(m, metrics, null, r.steps(),
        settings.dataset() + " factorization machine, " + modeName + ", " + trainers + " trainers", -1,
        profile == null ? List.of() : profile.lines(), r.model());
  }

  /** With {@code --metrics-port P}, where node i's meters are ({@code LocalCluster}: P + i). */
  private void printMetricsPorts(Config runConfig, int nodes) {
    int port = runConfig.getInt("shardtrain.metrics.port");
    if (port <= 0) return;
    if (port + nodes - 1 > 65535) {
      throw new IllegalArgumentException("--metrics-port " + port + " serves node i at port " + port + " + i: "
          + nodes + " nodes need ports up to " + (port + nodes - 1) + ", above 65535; pick a lower port");
    }
    err.printf("shardtrain: node meters at http://%s:%d/metrics%s while the cluster runs%n",
        runConfig.getString("shardtrain.metrics.host"), port, nodes > 1 ? " to port " + (port + nodes - 1) : "");
  }

  /** The report fields that say how a click-through job was set up (the same on one process and a cluster). */
  private static void putCtrSetup(Map<String, Object> m, TrainSettings settings, CtrSettings ctr, CtrData data) {
    m.put("optimizer", settings.optimizer());
    m.put("lr", settings.lr());
    m.put("row_optimizer", "adagrad");
    m.put("row_lr", ctr.rowLr());
    m.put("seed", settings.seed());
    m.put("train_examples", data.train().size());
    m.put("test_examples", data.test().size());
    m.put("hash_space", data.train().hashSpace());
    putStart(m, settings);
  }

  private static void putRates(Map<String, Object> m, long samples, double samplesPerSec, double trainSeconds,
      double wallSeconds) {
    m.put("samples", samples);
    m.put("samples_per_sec", samplesPerSec);
    m.put("train_seconds", trainSeconds);
    m.put("wall_seconds", wallSeconds);
  }

  /** The report fields that say how the job was set up (the same in every mode). */
  private static void putSettings(Map<String, Object> m, TrainSettings s) {
    m.put("batch", s.batch());
    m.put("hidden", s.hidden());
    m.put("activation", s.activation());
    m.put("init", s.initialization().label());
    m.put("optimizer", s.optimizer());
    m.put("lr", s.lr());
    m.put("lr_schedule", s.lrSchedule());
    m.put("weight_decay", s.weightDecay());
    m.put("seed", s.seed());
    m.put("compute_threads", s.computeThreads());
    m.put("backend", s.backend());
    putStart(m, s);
  }

  /** Where the model started, when not from its seed: the saved model or checkpoint the run read. */
  private static void putStart(Map<String, Object> m, TrainSettings s) {
    if (s.initFrom() != null) m.put("init_from", s.initFrom().toString());
    if (s.resumeFrom() != null) m.put("resume_from", s.resumeFrom().toString());
  }

  /** The report fields every mode measures. */
  private static void putResult(Map<String, Object> m, long samples, double samplesPerSec, double trainSeconds,
      double wallSeconds, double testAccuracy, double finalLoss) {
    putRates(m, samples, samplesPerSec, trainSeconds, wallSeconds);
    m.put("test_accuracy", testAccuracy);
    m.put("final_loss", finalLoss);
  }

  private static Map<String, Object> report(TrainSettings s, SingleProcessTraining.Result r) {
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
