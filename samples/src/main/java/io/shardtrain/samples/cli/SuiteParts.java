package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.bench.GemmBenchmark;
import io.shardtrain.bench.PsBandwidthBenchmark;
import io.shardtrain.bench.RecoveryBenchmark;
import io.shardtrain.compute.FileTrees;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.report.SuiteFigure;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The parts of {@code bench suite}, each run as its own command runs it and returned as named
 * figures; each prints its results as it goes.
 */
final class SuiteParts {
  /** Blocks of ps-bandwidth and recovery, as their own commands cut them by default. */
  private static final int BLOCK_FLOATS = 262144;

  private final PrintWriter stdout;

  SuiteParts(PrintWriter stdout) {
    this.stdout = stdout;
  }

  /** The square product of {@code n}, then the products of one training step of the MLP of {@code s}. */
  List<SuiteFigure> gemm(TrainSettings s, int n, int warmup, int iterations) {
    int threads = s.computeThreads();
    GemmBenchmark.Result square = GemmBenchmark.run(n, threads, warmup, iterations);
    stdout.println(square);
    // Their flops over their median times together is what the step's compute gets.
    int[] hidden = s.hidden();
    int[] dims = new int[hidden.length + 2];
    dims[0] = 784;
    System.arraycopy(hidden, 0, dims, 1, hidden.length);
    dims[dims.length - 1] = 10;
    double flops = 0;
    double seconds = 0;
    for (GemmBenchmark.Shape shape : GemmBenchmark.mlpShapes(s.batch(), dims)) {
      GemmBenchmark.Result r = GemmBenchmark.run(shape, threads, warmup, iterations);
      stdout.println(r);
      flops += shape.flops();
      seconds += r.medianSeconds();
    }
    String mlp = Arrays.stream(dims).mapToObj(String::valueOf).collect(Collectors.joining("-"));
    return List.of(
        new SuiteFigure("gemm square n=" + n, square.gflops(), "GFLOP/s", true),
        new SuiteFigure("gemm training step " + mlp + " batch " + s.batch(), flops / seconds / 1e9, "GFLOP/s", true));
  }

  /**
   * The single process, then each of {@link BenchSuiteCommand#MODES} with {@code trainers} on
   * {@code ps} nodes, as {@code experiment} runs them; a distributed run's samples/s also as a
   * ratio to the single process's.
   */
  List<SuiteFigure> training(LocalRun run, TrainSettings singleSettings, Map<String, Config> modeConfigs,
      DataSets.TrainTest data, int ps, int trainers) throws Exception {
    List<SuiteFigure> figures = new ArrayList<>();
    Map<String, Object> single = run.single(singleSettings, data).summary();
    double base = number(single, "samples_per_sec");
    figures.add(new SuiteFigure("single samples/s", base, "samples/s", true));
    figures.add(new SuiteFigure("single test accuracy", number(single, "test_accuracy"), "fraction", true, true));
    stdout.printf(Locale.ROOT, "single: %.0f samples/s, test accuracy %.4f%n", base, number(single, "test_accuracy"));
    stdout.flush();
    for (String mode : BenchSuiteCommand.MODES) {
      Config c = modeConfigs.get(mode);
      LocalRun.Outcome o = ExperimentCommand.MODES.get(mode).train(run, c, TrainSettings.fromConfig(c), data, ps,
          trainers);
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

  List<SuiteFigure> psBandwidth(int floats, int rounds, int warmup) {
    var r = PsBandwidthBenchmark.run(floats, Math.min(BLOCK_FLOATS, floats), rounds, warmup);
    stdout.println(r.summary());
    String of = " (" + floats + " floats)";
    return List.of(
        new SuiteFigure("ps-bandwidth raw socket" + of, r.rawGBps(), "GB/s", true),
        new SuiteFigure("ps-bandwidth blocks over Artery" + of, r.inlineGBps(), "GB/s", true),
        new SuiteFigure("ps-bandwidth blocks over the bulk channel" + of, r.bulkGBps(), "GB/s", true));
  }

  List<SuiteFigure> recovery(int floats, int snapshotEvery) throws Exception {
    // A fresh H2 file, as bench recovery uses by default: the in-memory journal dies with the node.
    Path tmp = Files.createTempDirectory("shardtrain-suite-recovery");
    try {
      var r = RecoveryBenchmark.run(floats, Math.min(BLOCK_FLOATS, floats), snapshotEvery,
          JournalConfig.forUrl("jdbc:h2:" + tmp.resolve("journal")));
      stdout.println(r.summary());
      return List.of(new SuiteFigure("recovery (" + floats + " floats, snapshot every " + snapshotEvery + ")",
          r.recoverySeconds(), "s", false));
    } finally {
      FileTrees.delete(tmp);
    }
  }

  private static double number(Map<String, Object> m, String key) {
    return ((Number) m.get(key)).doubleValue();
  }
}
