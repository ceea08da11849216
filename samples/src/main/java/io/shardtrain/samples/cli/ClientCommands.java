package io.shardtrain.samples.cli;

import akka.actor.Address;
import akka.cluster.Member;
import akka.cluster.typed.Cluster;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.JobSubmitter;
import io.shardtrain.samples.cluster.JobWatch;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.report.Json;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Commands that talk to a running cluster: each joins it for a moment as a {@code client} member
 * (no blocks, no trainer, no journal), does its one thing, and leaves.
 */
final class ClientCommands {
  private ClientCommands() {}

  abstract static class Client implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--contact", required = true, description = "A seed node of the cluster, HOST:PORT.")
    String contact;
    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address this client binds.")
    String host;
    @Option(names = "--config", paramLabel = "FILE", description = "HOCON file layered under the flags.")
    Path config;
    @Option(names = "--timeout", defaultValue = "60", description = "Seconds to wait for the cluster (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Override
    public Integer call() throws Exception {
      Config c = NodeConfig.build(List.of("client"), host, 0, List.of(contact), "memory", config, Map.of());
      ClusterNode.Started node = ClusterNode.start(c);
      try {
        ClusterNode.awaitUp(node.system(), Duration.ofSeconds(timeoutSeconds));
        PrintWriter out = spec.commandLine().getOut();
        int code = run(node, out);
        out.flush();
        return code;
      } finally {
        node.system().terminate();
        node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    }

    abstract int run(ClusterNode.Started node, PrintWriter out) throws Exception;
  }

  @Command(name = "submit", mixinStandardHelpOptions = true,
      description = "Start a job on a running cluster: initialise its parameter blocks, give it to the master.")
  static final class Submit extends Client {
    @Option(names = "--job", required = true, paramLabel = "FILE", description = "The job (HOCON, shardtrain.train.*).")
    Path job;
    @Option(names = "--wait", description = "Stay until the job is done, then print its throughput.")
    boolean await;
    @Option(names = "--report", paramLabel = "FILE", description = "With --wait: write a JSON report here.")
    Path report;

    @Override
    int run(ClusterNode.Started node, PrintWriter out) throws Exception {
      Config jobConfig = ShardTrainConfig.parseFile(job).withFallback(node.system().settings().config()).resolve();
      ShardTrainConfig.validate(jobConfig);
      TrainSettings.fromConfig(jobConfig);
      JobSpec submitted = JobSubmitter.submit(node.api(), jobConfig, Duration.ofSeconds(timeoutSeconds));
      out.printf("job %s submitted: %s mode, %d trainers, %d parameter blocks%n", submitted.jobId(),
          submitted.mode().name().toLowerCase(), submitted.trainers(), submitted.blocks().size());
      out.flush();
      if (!await) return 0;
      JobWatch.Result r = JobWatch.untilDone(node.api(), Duration.ofMillis(250), out);
      out.println(r.summary());
      if (report != null) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job_id", r.jobId());
        m.put("mode", submitted.mode().name().toLowerCase());
        m.put("trainers", submitted.trainers());
        m.put("blocks", submitted.blocks().size());
        m.put("examples", r.examples());
        m.put("samples_per_sec", r.samplesPerSec());
        m.put("training_seconds", r.trainingSeconds());
        m.put("wall_seconds", r.wallSeconds());
        Files.writeString(report, Json.write(m));
        out.println("report: " + report);
      }
      return 0;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = "Show members and roles, which node holds which parameter blocks, and the job's progress.")
  static final class Status extends Client {
    @Override
    int run(ClusterNode.Started node, PrintWriter out) throws Exception {
      Duration t = Duration.ofSeconds(10);
      out.println("members:");
      List<Address> ps = new ArrayList<>();
      for (Member m : Cluster.get(node.system()).state().getMembers()) {
        if (m.getRoles().contains("client")) continue;
        out.printf("  %s  %s  %s%n", m.address(), m.status(), new TreeSet<>(m.getRoles()));
        if (m.hasRole("ps")) ps.add(m.address());
      }
      out.println("parameter blocks:");
      for (Address a : ps) {
        try {
          var blocks = ClusterNode.blocksOf(node.system(), a, t);
          out.printf("  %s  %d blocks: %s%n", a, blocks.size(), String.join(" ", blocks));
        } catch (Exception e) {
          out.printf("  %s  no answer (%s)%n", a, e.getClass().getSimpleName());
        }
      }
      JobProtocol.JobStatus s = node.api().status().toCompletableFuture().get(t.toSeconds(), TimeUnit.SECONDS);
      if (!s.submitted()) {
        out.println("job: none submitted");
      } else {
        out.printf("job %s: %s, %s mode, epochs done %d of %s, %d examples reported%n", s.jobId(),
            s.done() ? "done" : "running", s.job().mode().name().toLowerCase(), s.epochsDone(),
            s.job().boundedByEpochs() ? String.valueOf(s.job().epochs()) : "unbounded (" + s.job().steps() + " steps)",
            s.examplesReported());
        out.printf("  trainers (membership epoch %d): %s%n", s.membershipEpoch(), s.members());
        if (s.checkpointStep() >= 0) {
          out.printf("  last checkpoint: step %d in %s%n", s.checkpointStep(), s.checkpointDir());
        }
        if (s.generation() > 0) out.printf("  rolled back to a checkpoint %d time(s)%n", s.generation());
        for (String lease : s.leases()) out.printf("  lease %s%n", lease);
      }
      return 0;
    }
  }

  @Command(name = "checkpoint", mixinStandardHelpOptions = true,
      description = "Take a globally consistent checkpoint of the running sync job now: every parameter block at one"
          + " step, optimizer slots and reader offsets, written by the master's node (docs/MODEL-FORMAT.md).")
  static final class CheckpointNow extends Client {
    @Option(names = "--dir", paramLabel = "DIR",
        description = "Directory to write, on the master's node (default: shardtrain.checkpoint.dir/JOB/step-N).")
    Path dir;

    @Override
    int run(ClusterNode.Started node, PrintWriter w) throws Exception {
      JobProtocol.JobStatus s = node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
      if (!s.submitted()) throw new IllegalStateException("no job has been submitted to this cluster");
      JobProtocol.CheckpointWritten c = node.api().checkpoint(dir == null ? null : dir.toAbsolutePath().toString())
          .toCompletableFuture().get(timeoutSeconds + 300L, TimeUnit.SECONDS);
      w.printf("checkpoint of job %s at step %d written to %s%n", c.jobId(), c.step(), c.dir());
      return 0;
    }
  }

  @Command(name = "save-model", mixinStandardHelpOptions = true,
      description = "Pull every parameter block of the running job and save the model (docs/MODEL-FORMAT.md).")
  static final class SaveModel extends Client {
    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Model directory to write.")
    Path out;
    @Option(names = "--npy", paramLabel = "DIR", description = "Also write NumPy .npy files here.")
    Path npy;

    @Override
    int run(ClusterNode.Started node, PrintWriter w) throws Exception {
      JobProtocol.JobStatus s = node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS);
      if (!s.submitted()) throw new IllegalStateException("no job has been submitted to this cluster");
      JobSpec job = s.job();
      var model = job.newModel(io.shardtrain.compute.backend.CpuBackend.create(1));
      long version = node.api().pullInto(model, job, 0).toCompletableFuture().get(60, TimeUnit.SECONDS);
      var snapshot = io.shardtrain.actors.ShardTrain.snapshot(model, job, version);
      io.shardtrain.persistence.model.ModelFiles.save(out, snapshot);
      w.printf("model of job %s at version %d saved to %s%n", job.jobId(), version, out);
      if (npy != null) {
        io.shardtrain.persistence.model.ModelFiles.exportNpy(snapshot, npy);
        w.printf("npy files in %s%n", npy);
      }
      return 0;
    }
  }
}
