package io.shardtrain.samples.cli;

import io.shardtrain.bench.GemmBenchmark;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code shardtrain bench gemm}: the CPU backend's GEMM on the square product, a training step's shapes, or others. */
@Command(name = "gemm", mixinStandardHelpOptions = true,
    description = "Single-precision GEMM on the CPU backend, in GFLOP/s: the square n x n product, the shapes "
        + "of an MLP training step, or given shapes.")
final class BenchGemmCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Option(names = "--n", defaultValue = "1024", description = "Matrix size of the square product (default: ${DEFAULT-VALUE}).")
  int n;
  @Option(names = "--shapes", defaultValue = "square", paramLabel = "SHAPES",
      description = "square (n x n times n x n), mlp (the products of a training step of the MLP "
          + "784-512-256-10 at --batch: each layer's forward, weight gradient and input gradient), or "
          + "comma-separated MxKxN[:OP], OP nn, tn, nt or tt naming transposed operands (default: ${DEFAULT-VALUE}).")
  String shapes;
  @Option(names = "--batch", defaultValue = "64", description = "Batch of the mlp shapes (default: ${DEFAULT-VALUE}).")
  int batch;
  @Option(names = "--threads", defaultValue = "1", description = "Threads (default: ${DEFAULT-VALUE}).")
  int threads;
  @Option(names = "--warmup", defaultValue = "5", description = "Warm-up runs (default: ${DEFAULT-VALUE}).")
  int warmup;
  @Option(names = "--iterations", defaultValue = "15", description = "Measured runs, at least (default: ${DEFAULT-VALUE}).")
  int iterations;
  @Option(names = "--min-seconds", defaultValue = "1", paramLabel = "SECONDS", description = "Measure each shape "
      + "for at least this long, in more runs than --iterations if needed: a median of 15 sub-millisecond "
      + "products follows the host's noise (default: ${DEFAULT-VALUE}; 0: exactly --iterations).")
  double minSeconds;
  @Option(names = "--rewrite-operands", description = "Before each product, write A and B on the calling thread "
      + "(untimed), as a training step does: other threads then fetch their slices from that thread's cache.")
  boolean rewriteOperands;
  @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
      description = "Write a JSON report here.")
  Path report;

  @Override
  public Integer call() throws Exception {
    BenchCommand.atLeast("--n", n, 1);
    BenchCommand.atLeast("--batch", batch, 1);
    BenchCommand.atLeast("--threads", threads, 1);
    BenchCommand.atLeast("--warmup", warmup, 0);
    BenchCommand.atLeast("--iterations", iterations, 1);
    if (!(minSeconds >= 0) || Double.isInfinite(minSeconds)) {
      throw new IllegalArgumentException("--min-seconds must be a number of seconds >= 0, got " + minSeconds);
    }
    List<GemmBenchmark.Shape> measured = switch (shapes.trim()) {
      case "square" -> List.of(new GemmBenchmark.Shape("square", n, n, n, false, false));
      case "mlp" -> GemmBenchmark.mlpShapes(batch, 784, 512, 256, 10);
      default -> {
        List<GemmBenchmark.Shape> l = new ArrayList<>();
        for (String s : shapes.split(",", -1)) l.add(GemmBenchmark.Shape.parse(s));
        yield l;
      }
    };
    List<Map<String, Object>> results = new ArrayList<>();
    for (GemmBenchmark.Shape shape : measured) {
      GemmBenchmark.Result r = GemmBenchmark.run(shape, threads, warmup, iterations, minSeconds, rewriteOperands);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("shape", shape.name());
      row.put("dims", shape.dims());
      row.put("gflops", r.gflops());
      row.put("best_gflops", r.bestGflops());
      row.put("median_seconds", r.medianSeconds());
      row.put("measured_iterations", r.iterations());
      results.add(row);
      spec.commandLine().getOut().printf("gemm %s %s threads=%d: %.1f GFLOP/s (median of %d), best %.1f%n",
          shape.name(), shape.dims(), threads, r.gflops(), r.iterations(), r.bestGflops());
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("benchmark", "gemm");
    m.put("shapes", shapes.trim());
    m.put("threads", threads);
    m.put("iterations", iterations);
    m.put("min_seconds", minSeconds);
    m.put("rewrite_operands", rewriteOperands);
    if (measured.size() == 1 && shapes.trim().equals("square")) {
      // One square product: its figures at the top level of the report, where readers of g.json look.
      Map<String, Object> only = results.get(0);
      m.put("n", n);
      m.put("gflops", only.get("gflops"));
      m.put("best_gflops", only.get("best_gflops"));
      m.put("median_seconds", only.get("median_seconds"));
      m.put("measured_iterations", only.get("measured_iterations"));
    } else {
      m.put("results", results);
    }
    m.put("cpu", System.getProperty("os.arch") + ", " + Runtime.getRuntime().availableProcessors() + " cores");
    m.put("java", System.getProperty("java.version"));
    return BenchCommand.writeReport(spec, report, m);
  }
}
