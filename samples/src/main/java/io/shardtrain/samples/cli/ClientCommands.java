package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.grpc.GrpcSettings;
import io.shardtrain.grpc.CheckpointReply;
import io.shardtrain.grpc.CheckpointRequest;
import io.shardtrain.grpc.CancelJobReply;
import io.shardtrain.grpc.CancelJobRequest;
import io.shardtrain.grpc.DeleteJobReply;
import io.shardtrain.grpc.DeleteJobRequest;
import io.shardtrain.grpc.ClickThroughShape;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.SaveModelReply;
import io.shardtrain.grpc.SaveModelRequest;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobReply;
import io.shardtrain.grpc.SubmitJobRequest;
import io.shardtrain.samples.cluster.JobWatch;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.DataSets;
import io.shardtrain.samples.report.Json;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Commands that talk to a running cluster through a node's gRPC API (docs/OPERATIONS.md): they do
 * not join the cluster. Each checks its own input first, then connects with a short deadline, so
 * an address where nothing answers fails within seconds and names that address.
 */
final class ClientCommands {
  private ClientCommands() {}

  abstract static class Client implements Callable<Integer> {
    @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
    @Option(names = "--grpc", paramLabel = "HOST:PORT",
        description = "A node's gRPC API (default: shardtrain.grpc.host and port of --config or the environment).")
    String grpc;
    @Option(names = "--config", paramLabel = "FILE", description = "HOCON file layered over the defaults.")
    Path config;
    @Option(names = "--timeout", defaultValue = "60",
        description = "Seconds the command's main call may take (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;
    @Option(names = "--connect-timeout", defaultValue = "4",
        description = "Seconds to connect before the address counts as not answering (default: ${DEFAULT-VALUE}).")
    int connectSeconds;
    @picocli.CommandLine.Mixin
    SecurityOption security = new SecurityOption();

    @Override
    public Integer call() throws Exception {
      if (timeoutSeconds < 1) throw new IllegalArgumentException("--timeout must be at least 1 s, got " + timeoutSeconds);
      if (connectSeconds < 1) {
        throw new IllegalArgumentException("--connect-timeout must be at least 1 s, got " + connectSeconds);
      }
      // Loading every reference.conf on the classpath takes a cold JVM a second or more: only when needed.
      Config local = grpc == null || config != null || needsConfig() || security.maybeOn()
          ? ShardTrainConfig.load(config) : null;
      prepare(local);
      try (ApiConnection api = ApiConnection.open(target(local), security.settings(local))) {
        PrintWriter out = spec.commandLine().getOut();
        int code = run(api, out);
        out.flush();
        return code;
      }
    }

    /** Where to connect: {@code --grpc}, else the configured gRPC address. */
    String target(Config local) {
      if (grpc != null) return grpc;
      GrpcSettings s = GrpcSettings.fromConfig(local);
      if (!s.serves() || s.port() == 0) {
        throw new IllegalArgumentException("no gRPC address: pass --grpc HOST:PORT, or set shardtrain.grpc.port in "
            + "--config or SHARDTRAIN_GRPC_PORT");
      }
      return s.host() + ":" + s.port();
    }

    /** Whether {@link #prepare} reads this side's configuration even when {@code --grpc} names the address. */
    boolean needsConfig() {
      return false;
    }

    /**
     * Checks the command's own input before anything is sent; {@code local} is this side's
     * configuration (null when the command does not need it and {@code --grpc} was given).
     */
    void prepare(Config local) throws Exception {}

    abstract int run(ApiConnection api, PrintWriter out) throws Exception;

    Duration timeout() {
      return Duration.ofSeconds(timeoutSeconds);
    }

    Duration connect() {
      return Duration.ofSeconds(connectSeconds);
    }
  }

  @Command(name = "submit", mixinStandardHelpOptions = true,
      description = "Start a job on a running cluster: initialise its parameter blocks, give it to the master.")
  static final class Submit extends Client {
    @Option(names = "--job", required = true, paramLabel = "FILE", description = "The job (HOCON, shardtrain.train.*).")
    Path job;
    @Option(names = "--resume-from", paramLabel = "DIR", description = "Continue the job (a sync job) from this"
        + " checkpoint directory of the serving node: values, optimizer slots, schedule position, reader offsets.")
    Path resumeFrom;
    @Option(names = "--wait", description = "Stay until the job is done, then print its throughput.")
    boolean await;
    @Option(names = "--report", paramLabel = "FILE", converter = ReportFile.class,
        description = "With --wait: write a JSON report here.")
    Path report;

    private String jobText;
    private DatasetShape shape;

    @Override
    boolean needsConfig() {
      return true;
    }

    @Override
    void prepare(Config local) throws Exception {
      if (report != null && !await) {
        throw new IllegalArgumentException("--report writes the job's figures once it is done: add --wait");
      }
      // Parsed and checked here, so a bad job file fails before any connection.
      Config jobConfig = withResume(ShardTrainConfig.parseFile(job, "job file")).withFallback(local).resolve();
      ShardTrainConfig.validate(jobConfig);
      TrainSettings s = TrainSettings.fromConfig(jobConfig);
      ShardTrain.requireTrainers(jobConfig.getInt("shardtrain.train.trainers"));
      DataSets.requireKnown(s.dataset());
      // The shape the job's model is planned from; the trainers read the same data set.
      if (CtrData.isCtr(s.dataset())) {
        CtrData ctrData = CtrData.load(s.dataset(), CtrSettings.fromConfig(jobConfig), s.seed());
        ctrData.crowdedIdSpace().ifPresent(spec.commandLine().getErr()::println);
        var train = ctrData.train();
        shape = DatasetShape.newBuilder().setInputDim(train.denseDim()).setTrainExamples(train.size()).setClasses(2)
            .setClickThrough(ClickThroughShape.newBuilder().setFields(train.fields()).setHashSpace(train.hashSpace())
                .setFingerprint(train.fingerprint()))
            .build();
      } else {
        var data = DataSets.load(s.dataset(), s.dataDir()).train();
        shape = DatasetShape.newBuilder().setInputDim(data.dim()).setTrainExamples(data.size())
            .setClasses(data.numClasses()).build();
      }
      // The node takes a job's text on its own (no includes, no environment): send the file with its
      // includes and substitutions resolved here, where they were written.
      jobText = withResume(ShardTrainConfig.parseFile(job, "job file")).resolveWith(local.withFallback(jobConfig)).root()
          .render(com.typesafe.config.ConfigRenderOptions.concise());
    }

    /** The job with {@code --resume-from}, made absolute here (the serving node reads it). */
    private Config withResume(Config jobFile) {
      if (resumeFrom == null) return jobFile;
      return jobFile.withValue("shardtrain.train.resume-from",
          com.typesafe.config.ConfigValueFactory.fromAnyRef(resumeFrom.toAbsolutePath().toString()));
    }

    @Override
    int run(ApiConnection api, PrintWriter out) throws Exception {
      // A script submits right after starting its nodes: wait for one, as for a cluster still forming.
      api.connectPatiently(connect(), timeout(), why -> {
        spec.commandLine().getErr().println("shardtrain: " + why + "; trying again for up to " + timeoutSeconds
            + " s (--timeout)");
        spec.commandLine().getErr().flush();
      });
      SubmitJobRequest request = SubmitJobRequest.newBuilder().setJobConfig(jobText).setShape(shape).build();
      Job submitted = submitWhileUnavailable(api, request).getJob();
      out.printf("job %s submitted: %s mode, %s, %s%s%n", submitted.getJobId(), submitted.getMode(),
          NodeCommand.count(submitted.getTrainers(), "trainer"), NodeCommand.count(submitted.getBlocksCount(),
              "parameter block"),
          resumeFrom == null ? "" : ", resumed from " + resumeFrom.toAbsolutePath());
      out.flush();
      if (!await) return 0;
      // This job's status, not the newest job's: another may be submitted while this one runs.
      StatusRequest mine = StatusRequest.newBuilder().setJobId(submitted.getJobId()).build();
      JobWatch.Result r = JobWatch.untilDone(() -> {
        ClusterStatus s = api.call("GetStatus", mine, ClusterStatus.getDefaultInstance(), Duration.ofSeconds(10));
        return new JobWatch.Progress(s.getJob().getJobId(), s.getSubmitted(), s.getStarted(), s.getDone(),
            s.getExamplesReported(), s.getTrainersCount(), s.getJob().getTrainers());
      }, Duration.ofMillis(250), out, timeout());
      out.println(r.summary());
      if (report != null) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job_id", r.jobId());
        m.put("mode", submitted.getMode());
        m.put("trainers", submitted.getTrainers());
        m.put("blocks", submitted.getBlocksCount());
        m.put("examples", r.examples());
        m.put("samples_per_sec", r.samplesPerSec());
        m.put("training_seconds", r.trainingSeconds());
        m.put("wall_seconds", r.wallSeconds());
        Json.writeFile(report, m);
        out.println("report: " + report);
      }
      return 0;
    }

    /** Submits, again while the cluster says it is not ready yet (UNAVAILABLE), until the timeout. */
    private SubmitJobReply submitWhileUnavailable(ApiConnection api, SubmitJobRequest request) throws Exception {
      long deadline = System.nanoTime() + timeout().toNanos();
      boolean said = false;
      while (true) {
        Duration left = Duration.ofNanos(Math.max(1_000_000_000L, deadline - System.nanoTime()));
        try {
          return api.call("SubmitJob", request, SubmitJobReply.getDefaultInstance(), left);
        } catch (StatusRuntimeException e) {
          if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() + 1_000_000_000L > deadline) {
            return api.await("SubmitJob", request, SubmitJobReply.getDefaultInstance(), left, "submit");
          }
          if (!said) {
            // Once, as for a node not yet listening: a cluster still forming is normal, a minute's silence is not.
            spec.commandLine().getErr().println("shardtrain: " + e.getStatus().getDescription() + "; trying again for"
                + " up to " + Math.max(1, (deadline - System.nanoTime()) / 1_000_000_000L) + " s (--timeout)");
            spec.commandLine().getErr().flush();
            said = true;
          }
          Thread.sleep(1000);
        }
      }
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = "Show members and roles, each node's examples/s and bytes/s, which node holds which parameter"
          + " blocks, the cluster's jobs, a job's progress with each trainer's task and offset, which trainers each"
          + " waiting block's sync barrier waits for, and the last error of each block that had one.")
  static final class StatusCommand extends Client {
    @Option(names = "--watch", paramLabel = "SECONDS", arity = "0..1", fallbackValue = "2",
        description = "Print the status again every SECONDS (2 when not given) until the job is done, each time with"
            + " each node's and the job's rates since the print before and how long each sync barrier has waited.")
    Integer watch;
    private static final java.time.format.DateTimeFormatter CLOCK =
        java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss");
    /** Stops a watch after this many prints (tests). */
    @Option(names = "--watch-count", hidden = true, defaultValue = "2147483647")
    int watchCount;
    @Option(names = "--job", paramLabel = "JOB_ID",
        description = "The job to show (default: the newest running job, else the newest finished one).")
    String job = "";

    @Override
    int run(ApiConnection api, PrintWriter out) throws InterruptedException {
      if (watch != null && watch < 1) throw new IllegalArgumentException("--watch must be at least 1 second, not " + watch);
      StatusView view = new StatusView(out);
      for (int n = 1; ; n++) {
        ClusterStatus s = api.probe(true, job, connect(), timeout(), "status");
        if (watch != null) out.printf("--- %s ---%n", java.time.LocalTime.now().format(CLOCK));
        view.print(s, System.nanoTime());
        out.flush();
        if (watch == null || s.getDone() || n >= watchCount) return 0;
        Thread.sleep(watch * 1000L);
      }
    }
  }

  @Command(name = "checkpoint", mixinStandardHelpOptions = true,
      description = "Take a globally consistent checkpoint of the running sync job now: every parameter block at one"
          + " step, optimizer slots and reader offsets, written by the master's node (docs/MODEL-FORMAT.md).")
  static final class CheckpointNow extends Client {
    @Option(names = "--dir", paramLabel = "DIR",
        description = "Directory to write, on the master's node (default: shardtrain.checkpoint.dir/JOB/step-N).")
    Path dir;
    @Option(names = "--job", paramLabel = "JOB_ID",
        description = "The job to checkpoint (default: the newest running job, else the newest finished one).")
    String job = "";

    @Override
    int run(ApiConnection api, PrintWriter w) {
      ClusterStatus status = api.probe(false, job, connect(), timeout(), "checkpoint");
      if (!status.getSubmitted()) throw new IllegalStateException("no job has been submitted to this cluster");
      String jobId = status.getJob().getJobId();
      // A running job's checkpoint is taken at the next step every block reaches, which only trainers make.
      if (!status.getDone() && status.getTrainersCount() == 0) {
        throw new IllegalStateException("job " + jobId + " has no trainer: a checkpoint is taken at the next step every"
            + " block reaches, and no trainer takes one; start a trainer node first");
      }
      // Only a sync job has such a step; the master refuses the others with what to do instead.
      if ("sync".equalsIgnoreCase(status.getJob().getMode())) {
        w.printf("checkpoint of job %s asked for; waiting for the step every block reaches (at most %d s)%n", jobId,
            timeout().toSeconds());
        w.flush();
      }
      CheckpointRequest.Builder request = CheckpointRequest.newBuilder().setJobId(jobId);
      if (dir != null) request.setDir(dir.toAbsolutePath().toString());
      CheckpointReply c = api.await("Checkpoint", request.build(), CheckpointReply.getDefaultInstance(), timeout(),
          "checkpoint");
      w.printf("checkpoint of job %s at step %d written to %s%n", c.getJobId(), c.getStep(), c.getDir());
      return 0;
    }
  }

  @Command(name = "save-model", mixinStandardHelpOptions = true,
      description = "Pull every parameter block of the running job and save the model (docs/MODEL-FORMAT.md) on the"
          + " node that serves the gRPC API. A sync job's blocks are saved at one version, read again at the newest"
          + " version seen while a step is being applied; a block that does not get there is named. A click-through"
          + " job is saved with its table's rows once it is done or cancelled.")
  static final class SaveModel extends Client {
    @Option(names = "--out", required = true, paramLabel = "DIR",
        description = "Model directory to write, on the serving node (a relative path is made absolute here).")
    Path out;
    @Option(names = "--npy", paramLabel = "DIR", description = "Also write NumPy .npy files here (on the serving node).")
    Path npy;
    @Option(names = "--job", paramLabel = "JOB_ID",
        description = "The job whose model to save (default: the newest running job, else the newest finished one).")
    String job = "";

    @Override
    int run(ApiConnection api, PrintWriter w) {
      if (!api.probe(false, job, connect(), timeout(), "save-model").getSubmitted()) {
        throw new IllegalStateException("no job has been submitted to this cluster");
      }
      SaveModelRequest.Builder request = SaveModelRequest.newBuilder().setDir(out.toAbsolutePath().toString())
          .setJobId(job);
      if (npy != null) request.setNpyDir(npy.toAbsolutePath().toString());
      SaveModelReply r = api.await("SaveModel", request.build(), SaveModelReply.getDefaultInstance(), timeout(),
          "save-model");
      w.printf("model of job %s at version %d saved to %s on %s%n", r.getJobId(), r.getVersion(), r.getDir(), api.target());
      if (npy != null) w.printf("npy files in %s%n", npy.toAbsolutePath());
      return 0;
    }
  }

  @Command(name = "cancel-job", mixinStandardHelpOptions = true,
      description = "Cancel a running job: its trainers finish the step they are in, report it and leave, and no task"
          + " is leased after it. Its blocks keep the model: save-model and checkpoint still work, and delete-job"
          + " deletes its journal.")
  static final class CancelJob extends Client {
    @picocli.CommandLine.Parameters(paramLabel = "JOB_ID", description = "The running job to cancel.")
    String jobId;

    @Override
    int run(ApiConnection api, PrintWriter w) {
      if (jobId.isBlank()) throw new picocli.CommandLine.ParameterException(spec.commandLine(), "cancel-job needs a job id");
      CancelJobReply r = api.await("CancelJob", CancelJobRequest.newBuilder().setJobId(jobId).build(),
          CancelJobReply.getDefaultInstance(), timeout(), "cancel-job");
      List<String> trainers = new ArrayList<>();
      for (int i = 0; i < r.getTrainersCount(); i++) {
        trainers.add(r.getTrainers(i) + " (last step " + r.getLastSteps(i) + ")");
      }
      w.printf("job %s cancelled; %s%n", r.getJobId(), trainers.isEmpty() ? "it has no trainers"
          : "its trainers finish the step they are in and leave: " + String.join(", ", trainers));
      return 0;
    }
  }

  @Command(name = "delete-job", mixinStandardHelpOptions = true,
      description = "Delete a finished job's journal: the events and snapshots of its master, its parameter blocks and"
          + " its table's shards. A running job is refused; the job id stays taken.")
  static final class DeleteJob extends Client {
    @picocli.CommandLine.Parameters(paramLabel = "JOB_ID", description = "The finished job to delete.")
    String jobId;

    @Override
    int run(ApiConnection api, PrintWriter w) {
      DeleteJobReply r = api.await("DeleteJob", DeleteJobRequest.newBuilder().setJobId(jobId).build(),
          DeleteJobReply.getDefaultInstance(), timeout().plusSeconds(60), "delete-job");
      w.printf("job %s deleted: the journal of %d entities (its master and blocks)%n", r.getJobId(), r.getEntities());
      return 0;
    }
  }
}
