package io.shardtrain.samples.cli;

import io.shardtrain.compute.FileTrees;
import io.shardtrain.samples.report.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code shardtrain bench ...}: the project's benchmark commands. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Benchmarks.",
    subcommands = {BenchGemmCommand.class, BenchCommand.Transport.class, BenchCommand.PsBandwidth.class,
        BenchCommand.Recovery.class, BenchCommand.SparseMemory.class, BenchCommand.SparseRecovery.class,
        BenchCommand.Load.class, BenchCommand.GrpcBandwidthCommand.class, BenchSuiteCommand.class,
        BenchSpreadCommand.class})
final class BenchCommand implements Runnable {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** Refuses a flag's value below {@code min}, naming the flag. */
  static void atLeast(String flag, long value, long min) {
    if (value < min) throw new IllegalArgumentException(flag + " must be at least " + min + ", got " + value);
  }

  /** Refuses a flag's value above {@code max}, naming the flag. */
  static void atMost(String flag, long value, long max) {
    if (value > max) throw new IllegalArgumentException(flag + " must be at most " + max + ", got " + value);
  }

  /** Refuses a {@code --block} of floats outside what one block of the transport benchmarks may hold. */
  static void blockFloats(int block) {
    atLeast("--block", block, 1);
    atMost("--block", block, io.shardtrain.bench.TransportBenchmark.MAX_BLOCK_FLOATS);
  }

  /** Writes a benchmark's JSON report when {@code --report} was given; returns the exit code. */
  static int writeReport(picocli.CommandLine.Model.CommandSpec spec, Path report, Map<String, Object> m)
      throws java.io.IOException {
    if (report != null) {
      Json.writeFile(report, m);
      spec.commandLine().getOut().println("report: " + report);
    }
    return 0;
  }

  @Command(name = "transport", mixinStandardHelpOptions = true,
      description = "Push + pull of a parameter between two ActorSystems over loopback: raw socket, Artery "
          + "and the bulk channel, measured in one run, in GB/s.")
  static final class Transport implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--floats", defaultValue = "1048576", description = "Parameter size (default: ${DEFAULT-VALUE}).")
    int floats;
    @Option(names = "--rounds", defaultValue = "20", description = "Measured rounds (default: ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--block", defaultValue = "262144", description = "Floats per message (default: ${DEFAULT-VALUE}).")
    int block;
    @Option(names = "--in-flight", defaultValue = "4", description = "Messages in flight (default: ${DEFAULT-VALUE}).")
    int inFlight;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      atLeast("--floats", floats, 1);
      atLeast("--rounds", rounds, 1);
      blockFloats(block);
      atLeast("--in-flight", inFlight, 1);
      var r = io.shardtrain.bench.TransportBenchmark.run(floats, rounds, Math.min(block, floats), inFlight);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", "transport");
      m.put("floats", r.floats());
      m.put("block_floats", r.blockFloats());
      m.put("in_flight", r.inFlight());
      m.put("rounds", r.rounds());
      m.put("raw_gbps", r.rawGBps());
      m.put("artery_gbps", r.arteryGBps());
      m.put("bulk_gbps", r.bulkGBps());
      m.put("artery_to_raw", r.arteryToRaw());
      m.put("bulk_to_raw", r.bulkToRaw());
      spec.commandLine().getOut().println(r.summary());
      return writeReport(spec, report, m);
    }
  }

  @Command(name = "ps-bandwidth", mixinStandardHelpOptions = true,
      description = "Push + pull of a parameter through real parameter blocks between two ActorSystems over "
          + "loopback, over Artery and over the bulk channel, next to a raw socket in the same run, in GB/s.")
  static final class PsBandwidth implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--floats", defaultValue = "1048576", description = "Parameter size (default: ${DEFAULT-VALUE}).")
    int floats;
    @Option(names = "--block", defaultValue = "262144", description = "Floats per block (default: ${DEFAULT-VALUE}).")
    int block;
    @Option(names = "--rounds", defaultValue = "300", description = "Measured rounds of each path; a few dozen take "
        + "milliseconds, and on a busy 2-core host their ratio moves by a tenth from run to run "
        + "(default: ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--warmup", defaultValue = "300",
        description = "Warm-up rounds before measuring, so the JIT has compiled the paths (default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      atLeast("--floats", floats, 1);
      blockFloats(block);
      atLeast("--rounds", rounds, 1);
      atLeast("--warmup", warmup, 0);
      var r = io.shardtrain.bench.PsBandwidthBenchmark.run(floats, Math.min(block, floats), rounds, warmup);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", "ps-bandwidth");
      m.put("floats", r.floats());
      m.put("block_floats", r.blockFloats());
      m.put("blocks", r.blocks());
      m.put("warmup_rounds", r.warmup());
      m.put("rounds", r.rounds());
      m.put("raw_gbps", r.rawGBps());
      m.put("artery_gbps", r.inlineGBps());
      m.put("bulk_gbps", r.bulkGBps());
      m.put("bulk_to_raw", r.bulkGBps() / r.rawGBps());
      m.put("artery_to_raw", r.inlineGBps() / r.rawGBps());
      spec.commandLine().getOut().println(r.summary());
      return writeReport(spec, report, m);
    }
  }

  @Command(name = "grpc-bandwidth", mixinStandardHelpOptions = true,
      description = "Push + pull of a parameter through a node's gRPC API (loopback, a node in this JVM), next to "
          + "the same parameter through the parameter blocks' bulk channel (and Artery, and a raw socket) in the "
          + "same run, in GB/s.")
  static final class GrpcBandwidthCommand implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--floats", defaultValue = "1048576",
        description = "Parameter size, a multiple of 64 (default: ${DEFAULT-VALUE}).")
    int floats;
    @Option(names = "--block", defaultValue = "262144", description = "Floats per block (default: ${DEFAULT-VALUE}).")
    int block;
    @Option(names = "--rounds", defaultValue = "20", description = "Measured rounds (default: ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--warmup", defaultValue = "100",
        description = "Warm-up rounds of each path before measuring (default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      if (floats < GrpcBandwidth.INPUT || floats % GrpcBandwidth.INPUT != 0) {
        throw new IllegalArgumentException("--floats must be a positive multiple of " + GrpcBandwidth.INPUT
            + ", got " + floats);
      }
      blockFloats(block);
      atLeast("--rounds", rounds, 1);
      atLeast("--warmup", warmup, 0);
      GrpcBandwidth.Result r = GrpcBandwidth.run(floats, Math.min(block, floats), rounds, warmup);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", "grpc-bandwidth");
      m.put("floats", r.floats());
      m.put("block_floats", r.blockFloats());
      m.put("blocks", r.blocks());
      m.put("warmup_rounds", r.warmup());
      m.put("rounds", r.rounds());
      m.put("grpc_gbps", r.grpcGBps());
      m.put("bulk_gbps", r.bulk().bulkGBps());
      m.put("artery_gbps", r.bulk().inlineGBps());
      m.put("raw_gbps", r.bulk().rawGBps());
      m.put("grpc_to_bulk", r.grpcGBps() / r.bulk().bulkGBps());
      spec.commandLine().getOut().println(r.summary());
      return writeReport(spec, report, m);
    }
  }

  /**
   * The journal of a recovery benchmark's {@code --journal}: a JDBC URL as given, {@code log} (a log
   * journal in {@code tmp}), or none (an H2 file in {@code tmp}).
   */
  static com.typesafe.config.Config journalLayer(String journal, Path tmp) {
    if ("log".equals(journal)) {
      return com.typesafe.config.ConfigFactory.parseMap(Map.of("shardtrain.persistence.journal", "log",
          "shardtrain.persistence.log-dir", tmp.resolve("log").toString()));
    }
    return io.shardtrain.persistence.journal.JournalConfig.forUrl(journal != null ? journal
        : "jdbc:h2:" + tmp.resolve("journal"));
  }

  @Command(name = "recovery", mixinStandardHelpOptions = true,
      description = "Time for a ps node's blocks to recover on a new node from the journal (snapshot plus "
          + "the events behind it), for each parameter size and snapshot interval.")
  static final class Recovery implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--floats", split = ",", defaultValue = "1048576",
        description = "Parameter sizes, comma-separated (default: ${DEFAULT-VALUE}).")
    List<Integer> floats;
    @Option(names = "--snapshot-every", split = ",", defaultValue = "10,50",
        description = "Snapshot intervals in updates, comma-separated (default: ${DEFAULT-VALUE}).")
    List<Integer> snapshotEvery;
    @Option(names = "--block", defaultValue = "262144", description = "Floats per block (default: ${DEFAULT-VALUE}).")
    int block;
    @Option(names = "--journal", paramLabel = "URL",
        description = "jdbc:postgresql://..., jdbc:h2:PATH, or log (a log journal in a temporary directory) "
            + "(default: an H2 file in a temporary directory).")
    String journal;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      for (int n : floats) atLeast("--floats", n, 1);
      for (int every : snapshotEvery) atLeast("--snapshot-every", every, 1);
      atLeast("--block", block, 1);
      Path tmp = journal == null || journal.equals("log") ? Files.createTempDirectory("shardtrain-recovery") : null;
      com.typesafe.config.Config layer = journalLayer(journal, tmp);
      try {
        List<Map<String, Object>> runs = new ArrayList<>();
        for (int n : floats) {
          for (int every : snapshotEvery) {
            var r = io.shardtrain.bench.RecoveryBenchmark.run(n, Math.min(block, n), every, layer);
            spec.commandLine().getOut().println(r.summary());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("floats", r.floats());
            m.put("blocks", r.blocks());
            m.put("snapshot_every", r.snapshotEvery());
            m.put("updates", r.updates());
            m.put("events_replayed", r.eventsReplayed());
            m.put("recovery_seconds", r.recoverySeconds());
            m.put("journal", r.journal());
            m.put("update_seconds", r.updateSeconds());
            runs.add(m);
          }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", "recovery");
        m.put("runs", runs);
        return writeReport(spec, report, m);
      } finally {
        if (tmp != null) FileTrees.delete(tmp);
      }
    }
  }

  @Command(name = "sparse-memory", mixinStandardHelpOptions = true,
      description = "Memory and speed of one sparse table shard's rows: bytes per row from the store's arrays, "
          + "next to the raw floats, and rows created, updated and read per second.")
  static final class SparseMemory implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--rows", defaultValue = "1000000", description = "Rows (default: ${DEFAULT-VALUE}).")
    int rows;
    @Option(names = "--dim", defaultValue = "16", description = "Floats per row (default: ${DEFAULT-VALUE}).")
    int dim;
    @Option(names = "--optimizer", defaultValue = "adagrad", description = "sgd, adagrad or ftrl (default: ${DEFAULT-VALUE}).")
    String optimizer;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      atLeast("--rows", rows, 1);
      atLeast("--dim", dim, 1);
      var r = io.shardtrain.bench.SparseMemoryBenchmark.run(rows, dim,
          io.shardtrain.compute.sparse.RowOptimizer.kind(optimizer));
      spec.commandLine().getOut().println(r.summary());
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", "sparse-memory");
      m.put("rows", r.rows());
      m.put("dim", r.dim());
      m.put("optimizer", r.optimizer());
      m.put("bytes", r.bytes());
      m.put("bytes_per_row", r.bytesPerRow());
      m.put("to_raw_values", r.toRawValues());
      m.put("to_raw_values_and_slots", r.toRawWithSlots());
      m.put("heap_bytes", r.heapBytes());
      m.put("create_rows_per_sec", r.rows() / r.createSeconds());
      m.put("update_rows_per_sec", r.rows() / r.updateSeconds());
      m.put("read_rows_per_sec", r.rows() / r.readSeconds());
      m.put("expiry_scan_seconds", r.expiryScanSeconds());
      return writeReport(spec, report, m);
    }
  }

  @Command(name = "sparse-recovery", mixinStandardHelpOptions = true,
      description = "Time for a sparse table shard to recover on a new node from its chunked snapshot (header in "
          + "the snapshot store, rows in journal events) and the pushes after it.")
  static final class SparseRecovery implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--rows", defaultValue = "1000000", description = "Rows (default: ${DEFAULT-VALUE}).")
    int rows;
    @Option(names = "--dim", defaultValue = "16", description = "Floats per row (default: ${DEFAULT-VALUE}).")
    int dim;
    @Option(names = "--batch", defaultValue = "20000", description = "Rows per push (default: ${DEFAULT-VALUE}).")
    int batch;
    @Option(names = "--extra", defaultValue = "10",
        description = "Pushes after the snapshot, replayed on recovery (default: ${DEFAULT-VALUE}).")
    int extra;
    @Option(names = "--max-event-bytes", defaultValue = "4194304",
        description = "The most bytes of one event (default: ${DEFAULT-VALUE}).")
    int maxEventBytes;
    @Option(names = "--journal", paramLabel = "URL",
        description = "jdbc:postgresql://..., jdbc:h2:PATH, or log (a log journal in a temporary directory) "
            + "(default: an H2 file in a temporary directory).")
    String journal;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;

    @Override
    public Integer call() throws Exception {
      atLeast("--rows", rows, 1);
      atLeast("--dim", dim, 1);
      atLeast("--batch", batch, 1);
      atLeast("--extra", extra, 0);
      atLeast("--max-event-bytes", maxEventBytes, 1);
      Path tmp = journal == null || journal.equals("log")
          ? Files.createTempDirectory("shardtrain-sparse-recovery") : null;
      com.typesafe.config.Config layer = journalLayer(journal, tmp);
      try {
        var r = io.shardtrain.bench.SparseRecoveryBenchmark.run(rows, dim, batch, extra, maxEventBytes, layer);
        spec.commandLine().getOut().println(r.summary());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("benchmark", "sparse-recovery");
        m.put("rows", r.rowsRecovered());
        m.put("dim", r.dim());
        m.put("events_replayed", r.eventsReplayed());
        m.put("recovery_seconds", r.recoverySeconds());
        m.put("fill_seconds", r.fillSeconds());
        m.put("journal", r.journal());
        return writeReport(spec, report, m);
      } finally {
        if (tmp != null) FileTrees.delete(tmp);
      }
    }
  }

  @Command(name = "load", mixinStandardHelpOptions = true,
      description = "Many concurrent clients push gradients to and pull blocks from one node's gRPC API (an async "
          + "job) for a fixed time: throughput, p50/p99/p999 latency, and the check that every acknowledged push "
          + "was applied once. Starts a node in this JVM on loopback unless --grpc names one (loopback only).")
  static final class Load implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--clients", defaultValue = "64", description = "Concurrent clients (default: ${DEFAULT-VALUE}).")
    int clients;
    @Option(names = "--seconds", defaultValue = "60", description = "How long they run (default: ${DEFAULT-VALUE}).")
    int seconds;
    @Option(names = "--hidden", defaultValue = "256", description = "Hidden units of the job's MLP 64-H-10 "
        + "(default: ${DEFAULT-VALUE}).")
    int hidden;
    @Option(names = "--block-floats", defaultValue = "4096",
        description = "Floats per block: the size of each push and pull (default: ${DEFAULT-VALUE}).")
    int blockFloats;
    @Option(names = "--grpc", paramLabel = "HOST:PORT", description = "A running node's gRPC API on this machine.")
    String grpc;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "Write a JSON report here.")
    Path report;
    @picocli.CommandLine.Mixin
    SecurityOption security = new SecurityOption();

    @Override
    public Integer call() throws Exception {
      atLeast("--clients", clients, 1);
      atLeast("--seconds", seconds, 1);
      atLeast("--hidden", hidden, 1);
      atLeast("--block-floats", blockFloats, 1);
      if (grpc != null && !(grpc.startsWith("127.") || grpc.startsWith("localhost:"))) {
        throw new IllegalArgumentException("bench load drives a node on this machine only: --grpc must be "
            + "127.x.x.x:PORT or localhost:PORT, not " + grpc);
      }
      io.shardtrain.samples.cluster.ClusterNode.Started node = null;
      String target = grpc;
      if (target == null) {
        Map<String, Object> flags = new java.util.HashMap<>(security.flags());
        flags.put("shardtrain.transport.bulk.enabled", false);
        node = io.shardtrain.samples.cluster.ClusterNode.startOnLoopback(List.of("ps", "master"), flags);
        target = "127.0.0.1:" + node.grpcPort();
      }
      try {
        LoadBenchmark.Result r = LoadBenchmark.run(target, clients, java.time.Duration.ofSeconds(seconds), hidden,
            blockFloats, security.settings(security.maybeOn()
                ? io.shardtrain.actors.config.ShardTrainConfig.load(null) : null));
        spec.commandLine().getOut().printf("load: %d clients, %.1f s, %d blocks of %d floats: %.0f pushes/s, "
                + "%.0f pulls/s; push p50/p99/p999 %d/%d/%d us, pull %d/%d/%d us; %d failed calls; "
                + "%d pushes acknowledged as applied, block versions add up to %d: %s%n",
            r.clients(), r.seconds(), r.blocks(), r.floatsPerBlock(), r.pushes() / r.seconds(),
            r.pulls() / r.seconds(), r.push().getValueAtPercentile(50), r.push().getValueAtPercentile(99),
            r.push().getValueAtPercentile(99.9), r.pull().getValueAtPercentile(50), r.pull().getValueAtPercentile(99),
            r.pull().getValueAtPercentile(99.9), r.failures(), r.appliedAcknowledged(), r.blockVersions(),
            r.conserved() ? "conserved" : "NOT CONSERVED");
        if (r.firstFailure() != null) spec.commandLine().getOut().println("load: first failed call: " + r.firstFailure());
        writeReport(spec, report, r.toJson());
        return r.conserved() ? 0 : 3;
      } finally {
        if (node != null) {
          node.system().terminate();
          node.system().getWhenTerminated().toCompletableFuture().get();
        }
      }
    }
  }
}
