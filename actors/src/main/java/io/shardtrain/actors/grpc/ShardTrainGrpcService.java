package io.shardtrain.actors.grpc;

import akka.NotUsed;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.AskPattern;
import akka.pattern.StatusReply;
import akka.stream.javadsl.Source;
import com.typesafe.config.Config;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.sparse.SparseClient;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.grpc.BlockValues;
import io.shardtrain.grpc.CancelJobReply;
import io.shardtrain.grpc.CancelJobRequest;
import io.shardtrain.grpc.CheckpointReply;
import io.shardtrain.grpc.CheckpointRequest;
import io.shardtrain.grpc.DeleteJobReply;
import io.shardtrain.grpc.DeleteJobRequest;
import io.shardtrain.grpc.HeartbeatReply;
import io.shardtrain.grpc.HeartbeatRequest;
import io.shardtrain.grpc.LeaseTaskReply;
import io.shardtrain.grpc.LeaseTaskRequest;
import io.shardtrain.grpc.LeaveJobReply;
import io.shardtrain.grpc.LeaveJobRequest;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.RegisterTrainerReply;
import io.shardtrain.grpc.RegisterTrainerRequest;
import io.shardtrain.grpc.ReportProgressReply;
import io.shardtrain.grpc.ReportProgressRequest;
import io.shardtrain.grpc.RolledBack;
import io.shardtrain.grpc.SaveModelReply;
import io.shardtrain.grpc.SaveModelRequest;
import io.shardtrain.grpc.ShardTrainApi;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobReply;
import io.shardtrain.grpc.SubmitJobRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The gRPC API's calls, each turned into the master's or the blocks' protocol and back; checks a
 * request against the job (block ids, gradient lengths) before anything is sent, so those errors
 * have their own types ({@link ApiError}). Errors leave as failed stages; {@link GrpcServer} maps
 * them to status codes.
 */
final class ShardTrainGrpcService implements ShardTrainApi {
  private final ShardTrain api;
  private final ActorSystem<?> system;
  private final ActorRef<JobProtocol.Command> master;
  private final Duration timeout;
  /** How long ShardTrain's own calls (pull, pullInto, submit) wait: what their failures say. */
  private final Duration apiTimeout;
  private final Duration checkpointWait;
  private final JobMessages messages = new JobMessages();
  private final GrpcTrainers trainers;
  private final Executor blocking;
  private final ModelSaves saves;
  /** The cluster's job once seen: one journal holds one job, so it does not change under a running node. */
  private final Map<String, JobSpec> knownJobs = new ConcurrentHashMap<>();

  ShardTrainGrpcService(ShardTrain api, GrpcSettings settings) {
    this.api = api;
    this.system = api.system();
    this.master = api.master();
    this.timeout = settings.askTimeout();
    var config = system.settings().config();
    this.apiTimeout = config.getDuration("shardtrain.trainer.ask-timeout");
    this.checkpointWait = checkpointWait(config);
    this.trainers = new GrpcTrainers(system);
    this.blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    this.saves = new ModelSaves(api, blocking, apiTimeout, timeout);
  }

  /** How long a checkpoint call waits for the master: the longest wait of any call. */
  static Duration checkpointWait(Config config) {
    return config.getDuration("shardtrain.checkpoint.timeout")
        .plus(config.getDuration("shardtrain.trainer.ask-timeout"));
  }

  // ---- jobs ----

  @Override
  public CompletionStage<SubmitJobReply> submitJob(SubmitJobRequest in) {
    return call(() -> {
      Config node = system.settings().config();
      ShardTrain.Plan mlp = in.getShape().hasClickThrough() ? null : JobMessages.plan(in.getJobConfig(), in.getShape(), node);
      ShardTrain.CtrPlan ctr = mlp != null ? null : JobMessages.ctrPlan(in.getJobConfig(), in.getShape(), node);
      JobSpec planned = mlp != null ? mlp.job() : ctr.job();
      String id = planned.jobId();
      return CompletableFuture.completedFuture(id).thenCompose(s -> {
        // The one refusal of ShardTrain.submit: too few ps nodes joined yet, which passes. Placing checks
        // each block's spec (its learning-rate schedule, say) and throws at once: a bad request, through call.
        return call(() -> mlp != null ? api.submit(mlp) : api.submit(ctr)).handle((done, failure) -> {
          if (failure == null) return done;
          Throwable cause = failure instanceof java.util.concurrent.CompletionException c ? c.getCause() : failure;
          if (cause instanceof IllegalStateException e) throw ApiError.fail(new ApiError.NotReady(e.getMessage()));
          throw ApiError.fail(ApiError.of(failure, "the cluster (placing job " + id + ")", apiTimeout));
        });
      }).thenApply(done -> SubmitJobReply.newBuilder().setJob(messages.job(planned)).build());
    });
  }

  @Override
  public CompletionStage<ClusterStatus> getStatus(StatusRequest in) {
    CompletionStage<JobProtocol.JobStatus> asked = in.getJobId().isEmpty() ? status()
        : answer(api.status(in.getJobId()), "the master", timeout);
    CompletionStage<List<JobProtocol.JobEntry>> jobs = answer(api.jobs(), "the master", timeout);
    return call(() -> asked.thenCombine(jobs, (s, list) -> {
      if (!in.getJobId().isEmpty() && !s.submitted()) {
        throw ApiError.fail(new ApiError.UnknownJob(in.getJobId(), s.jobId().equals(in.getJobId())));
      }
      return Map.entry(s, list);
    }).thenCompose(sj -> {
      JobProtocol.JobStatus s = sj.getKey();
      ClusterStatus.Builder b = ClusterStatus.newBuilder().addAllMembers(ClusterView.members(system))
          .setSubmitted(s.submitted()).setStarted(s.started()).setDone(s.done()).setCancelled(s.cancelled())
          .setEpochsDone(s.epochsDone()).setMembershipEpoch(s.membershipEpoch()).addAllTrainers(s.members()).setExamplesReported(s.examplesReported())
          .addAllLeases(s.leases()).setCheckpointStep(s.checkpointStep()).setGeneration(s.generation())
          .setTestAuc(s.testAuc()).setTestAucExamples(s.testAucExamples())
          .addAllTrainerProgress(JobMessages.trainerProgress(s.progress(), system.address()));
      if (s.checkpointDir() != null) b.setCheckpointDir(s.checkpointDir());
      for (JobProtocol.JobEntry e : sj.getValue()) {
        b.addJobs(io.shardtrain.grpc.JobEntry.newBuilder().setJobId(e.jobId()).setRunning(e.running())
            .setCancelled(e.cancelled()));
      }
      if (s.submitted()) b.setJob(messages.job(s.job()));
      // A finished job's blocks have left memory: asking them would only wake them.
      CompletionStage<List<io.shardtrain.grpc.BlockState>> blocks = in.getIncludeBlocks() && s.submitted() && !s.done()
          ? blockStates(s.job()) : CompletableFuture.completedFuture(List.of());
      CompletionStage<List<io.shardtrain.grpc.NodeTraffic>> traffic = in.getIncludeBlocks()
          ? ClusterView.traffic(system, timeout) : CompletableFuture.completedFuture(List.of());
      return ClusterView.placement(system, timeout)
          .thenCombine(blocks, (placement, states) -> b.addAllPlacement(placement).addAllBlocks(states))
          .thenCombine(traffic, (built, nodes) -> built.addAllTraffic(nodes).build());
    }));
  }

  private CompletionStage<List<io.shardtrain.grpc.BlockState>> blockStates(JobSpec job) {
    List<CompletableFuture<io.shardtrain.grpc.BlockState>> asks = new ArrayList<>();
    for (String id : job.blocks()) {
      asks.add(ParameterBlock.entityRef(system, id).<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, timeout)
          .handle((stats, failure) -> failure == null ? JobMessages.blockState(stats)
              : io.shardtrain.grpc.BlockState.newBuilder().setBlockId(id).setAnswered(false).build())
          .toCompletableFuture());
    }
    return ClusterView.all(asks);
  }

  // ---- trainers ----

  @Override
  public CompletionStage<RegisterTrainerReply> registerTrainer(RegisterTrainerRequest in) {
    return call(() -> {
      String id = GrpcTrainers.checkedId(in.getTrainerId());
      ActorRef<TrainerNotice> ref = trainers.refFor(id);
      return askMaster(in.getJobId(), (ActorRef<StatusReply<JobProtocol.Registration>> replyTo)
          -> new JobProtocol.RegisterTrainer(id, ref, replyTo)).thenApply(messages::registration);
    });
  }

  @Override
  public CompletionStage<HeartbeatReply> heartbeat(HeartbeatRequest in) {
    return call(() -> {
      String id = GrpcTrainers.checkedId(in.getTrainerId());
      masterOf(in.getJobId()).tell(new JobProtocol.Heartbeat(id));
      HeartbeatReply.Builder b = HeartbeatReply.newBuilder().setJobCancelled(trainers.cancelled(id));
      for (TrainerNotice n : trainers.drain(id)) {
        if (n instanceof TrainerNotice.RollBack r) {
          b.addRollbacks(RolledBack.newBuilder().setStep(r.step()).setGeneration(r.generation()));
        }
      }
      return CompletableFuture.completedFuture(b.build());
    });
  }

  @Override
  public CompletionStage<LeaseTaskReply> leaseTask(LeaseTaskRequest in) {
    return call(() -> {
      String id = GrpcTrainers.checkedId(in.getTrainerId());
      return askMaster(in.getJobId(),
              (ActorRef<StatusReply<JobProtocol.TaskReply>> replyTo) -> new JobProtocol.RequestTask(id, replyTo))
          .thenApply(JobMessages::lease);
    });
  }

  @Override
  public CompletionStage<ReportProgressReply> reportProgress(ReportProgressRequest in) {
    return call(() -> {
      String id = GrpcTrainers.checkedId(in.getTrainerId());
      if (in.getStepsCount() == 0) throw ApiError.fail(new ApiError.BadRequest("a progress report needs a step"));
      List<JobProtocol.StepOffset> steps = new ArrayList<>();
      for (var s : in.getStepsList()) steps.add(new JobProtocol.StepOffset(s.getStep(), s.getOffset()));
      return askMaster(in.getJobId(), (ActorRef<StatusReply<akka.Done>> replyTo) -> new JobProtocol.ReportProgress(id,
          in.getEpoch(), in.getTask(), steps, in.getGeneration(), replyTo))
          .thenApply(d -> ReportProgressReply.newBuilder().setJobCancelled(trainers.cancelled(id)).build());
    });
  }

  @Override
  public CompletionStage<LeaveJobReply> leaveJob(LeaveJobRequest in) {
    return call(() -> {
      String id = GrpcTrainers.checkedId(in.getTrainerId());
      return askMaster(in.getJobId(),
              (ActorRef<StatusReply<akka.Done>> replyTo) -> new JobProtocol.LeaveJob(id, replyTo))
          .thenApply(d -> {
            trainers.stop(id);
            return LeaveJobReply.getDefaultInstance();
          });
    });
  }

  // ---- parameters ----

  @Override
  public Source<BlockValues, NotUsed> pullParameters(PullRequest in) {
    CompletionStage<List<String>> ids = call(() -> job(in.getJobId()).thenApply(job -> {
      Map<String, BlockSlice> layout = messages.layout(job);
      if (in.getBlockIdsCount() == 0) return List.copyOf(layout.keySet());
      for (String id : in.getBlockIdsList()) {
        if (!layout.containsKey(id)) throw ApiError.fail(new ApiError.UnknownBlock(job.jobId(), id));
      }
      return List.copyOf(in.getBlockIdsList());
    }));
    long minVersion = in.getMinVersion();
    return Source.completionStage(ids)
        .flatMapConcat(list -> Source.from(list)
            .mapAsyncUnordered(Math.max(1, Math.min(list.size(), 64)),
                // Converted on a dispatcher thread: the answer arrives on the block's own (a local
                // block answers inline) or on the bulk channel's reader, which copying a block would hold up.
                id -> answer(api.pull(id, minVersion), "block " + id, apiTimeout)
                    .thenApplyAsync(v -> values(id, v), system.executionContext())));
  }

  private static BlockValues values(String blockId, BlockProtocol.BlockValues v) {
    BlockValues.Builder b = BlockValues.newBuilder()
        .setBlockId(blockId).setParameter(v.parameter())
        .setIndex(v.index()).setOffset(v.offset()).setVersion(v.version());
    for (float f : v.values()) b.addValues(f);
    return b.build();
  }

  @Override
  public CompletionStage<PushReply> pushGradient(PushRequest in) {
    return call(() -> {
      String trainer = GrpcTrainers.checkedId(in.getTrainerId());
      if (in.getStep() < 1) throw ApiError.fail(new ApiError.BadRequest("step must be >= 1, not " + in.getStep()));
      return job(in.getJobId()).thenCompose(job -> {
        BlockSlice slice = messages.layout(job).get(in.getBlockId());
        if (slice == null) throw ApiError.fail(new ApiError.UnknownBlock(job.jobId(), in.getBlockId()));
        // No values with weight 0: a sync step without data, which the block takes as such.
        boolean nothing = in.getValuesCount() == 0 && in.getWeight() == 0f;
        if (!nothing && in.getValuesCount() != slice.length()) {
          throw ApiError.fail(new ApiError.WrongShape(in.getBlockId(), in.getValuesCount(), slice.length()));
        }
        float[] values = new float[in.getValuesCount()];
        for (int i = 0; i < values.length; i++) values[i] = in.getValues(i);
        BlockProtocol.TaskMark mark = in.hasMark()
            ? new BlockProtocol.TaskMark(in.getMark().getEpoch(), in.getMark().getTask(), in.getMark().getOffset()) : null;
        return answer(ParameterBlock.entityRef(system, in.getBlockId()).<BlockProtocol.PushAck>askWithStatus(
            replyTo -> new BlockProtocol.PushGradient(trainer, in.getStep(), in.getBaseVersion(), in.getMembershipEpoch(),
                in.getWeight(), values, in.getGeneration(), mark, replyTo), timeout), "block " + in.getBlockId(), timeout);
      }).thenApply(JobMessages::pushAck);
    });
  }

  // ---- a click-through job's sparse table ----

  @Override
  public CompletionStage<io.shardtrain.grpc.SparseRows> sparsePull(io.shardtrain.grpc.SparsePullRequest in) {
    return call(() -> table(in.getJobId()).thenCompose(job -> {
      long[] ids = new long[in.getIdsCount()];
      for (int i = 0; i < ids.length; i++) ids[i] = in.getIds(i);
      SparseClient client = sparseClient(job, "grpc");
      return sparseAnswer(client.pull(route(client, ids), in.getMinVersion()), "table " + job.table().name())
          .thenApply(pulled -> {
            io.shardtrain.grpc.SparseRows.Builder b = io.shardtrain.grpc.SparseRows.newBuilder().addAllIds(in.getIdsList())
                .setDim(job.table().dim()).setVersion(pulled.version() == Long.MAX_VALUE ? 0 : pulled.version());
            for (float f : pulled.rows()) b.addValues(f);
            return b.build();
          });
    }));
  }

  @Override
  public CompletionStage<io.shardtrain.grpc.SparsePushReply> sparsePush(io.shardtrain.grpc.SparsePushRequest in) {
    return call(() -> {
      String trainer = GrpcTrainers.checkedId(in.getTrainerId());
      if (in.getStep() < 1) throw ApiError.fail(new ApiError.BadRequest("step must be >= 1, not " + in.getStep()));
      return table(in.getJobId()).thenCompose(job -> {
        int dim = job.table().dim();
        if ((long) in.getIdsCount() * dim != in.getGradsCount()) {
          throw ApiError.fail(new ApiError.BadRequest(in.getIdsCount() + " ids of table " + job.table().name()
              + " need " + (long) in.getIdsCount() * dim + " gradient floats (" + dim + " per id), not "
              + in.getGradsCount()));
        }
        long[] ids = new long[in.getIdsCount()];
        for (int i = 0; i < ids.length; i++) ids[i] = in.getIds(i);
        float[] grads = new float[in.getGradsCount()];
        for (int i = 0; i < grads.length; i++) grads[i] = in.getGrads(i);
        SparseClient client = sparseClient(job, trainer);
        return sparseAnswer(client.push(in.getStep(), in.getBaseVersion(), in.getWeight(), route(client, ids), grads),
            "table " + job.table().name());
      }).thenApply(JobMessages::sparsePushed);
    });
  }

  /** The running job, which must be a click-through job (one with a table). */
  private CompletionStage<JobSpec> table(String jobId) {
    return job(jobId).thenApply(job -> {
      if (job.table() == null) {
        throw ApiError.fail(new ApiError.Refused("job " + job.jobId(), "it trains an MLP and has no sparse table"));
      }
      return job;
    });
  }

  private SparseClient sparseClient(JobSpec job, String trainer) {
    return new SparseClient(system, job.table(), trainer, timeout);
  }

  /** A shard's refusal as the API's error: the request's fault, a shard on the move, or a refusal. */
  private <T> CompletionStage<T> sparseAnswer(CompletionStage<T> stage, String from) {
    return Asks.onArrival(stage).handle((v, failure) -> {
      if (failure == null) return v;
      Throwable t = failure instanceof java.util.concurrent.CompletionException c && c.getCause() != null
          ? c.getCause() : failure;
      if (t instanceof SparseClient.ShardRefused r) {
        throw ApiError.fail(switch (r.refused().problem()) {
          case ID_OUTSIDE_TABLE, WRONG_SHARD, WRONG_DIM, NON_FINITE, MALFORMED -> new ApiError.BadRequest(r.getMessage());
          case MOVING, TIMED_OUT -> new ApiError.NotReady(r.getMessage());
          default -> new ApiError.Refused(from, r.getMessage());
        });
      }
      throw ApiError.fail(ApiError.of(failure, from, timeout));
    });
  }

  /** The routing of {@code ids}; an id outside the table is the request's fault. */
  private static io.shardtrain.actors.sparse.BatchRouting route(SparseClient client, long[] ids) {
    try {
      return client.route(ids);
    } catch (IllegalArgumentException e) {
      throw ApiError.fail(new ApiError.BadRequest(e.getMessage()));
    }
  }

  // ---- models and checkpoints ----

  /** Why the file system refused, in words: its reason, else what the exception's type says, and the file. */
  static String reason(java.nio.file.FileSystemException e) {
    return io.shardtrain.compute.FileTrees.reason(e) + " (" + e.getFile() + ")";
  }

  @Override
  public CompletionStage<SaveModelReply> saveModel(SaveModelRequest in) {
    return call(() -> {
      if (in.getDir().isBlank()) throw ApiError.fail(new ApiError.BadRequest("save-model needs a directory"));
      return job(in.getJobId()).thenCompose(job -> saves.save(job, in));
    });
  }

  @Override
  public CompletionStage<CheckpointReply> checkpoint(CheckpointRequest in) {
    return call(() -> job(in.getJobId()).thenCompose(job -> answer(api.checkpoint(job.jobId(), in.getDir()), "the master",
            checkpointWait))
        .thenApply(c -> CheckpointReply.newBuilder().setJobId(c.jobId()).setStep(c.step()).setDir(c.dir()).build()));
  }

  @Override
  public CompletionStage<CancelJobReply> cancelJob(CancelJobRequest in) {
    return call(() -> {
      if (in.getJobId().isBlank()) throw ApiError.fail(new ApiError.BadRequest("cancel-job needs a job id"));
      return answer(api.cancel(in.getJobId()), "the master", timeout);
    }).thenApply(s -> {
      CancelJobReply.Builder b = CancelJobReply.newBuilder().setJobId(s.jobId());
      for (JobProtocol.TrainerProgress p : s.progress()) b.addTrainers(p.trainerId()).addLastSteps(p.lastStep());
      return b.build();
    });
  }

  @Override
  public CompletionStage<DeleteJobReply> deleteJob(DeleteJobRequest in) {
    return call(() -> {
      if (in.getJobId().isBlank()) throw ApiError.fail(new ApiError.BadRequest("delete-job needs a job id"));
      return answer(api.deleteJob(in.getJobId()), "the master", timeout.multipliedBy(5)).thenApply(d -> {
        knownJobs.remove(d.jobId());
        return DeleteJobReply.newBuilder().setJobId(d.jobId()).setEntities(d.entities()).build();
      });
    });
  }

  // ---- helpers ----

  /**
   * The running job: the one named {@code jobId}, or whichever runs when it is blank (calls that
   * act on the cluster's job); the API's typed errors when there is none or it is another.
   */
  private CompletionStage<JobSpec> job(String jobId) {
    JobSpec known = jobId.isEmpty() ? null : knownJobs.get(jobId);
    if (known != null) return CompletableFuture.completedFuture(known);
    CompletionStage<JobProtocol.JobStatus> asked = jobId.isEmpty() ? status()
        : answer(api.status(jobId), "the master", timeout);
    return asked.thenApply(s -> {
      if (!s.submitted() && jobId.isEmpty()) throw ApiError.fail(new ApiError.NoJob());
      if (!s.submitted()) throw ApiError.fail(new ApiError.UnknownJob(jobId, s.jobId().equals(jobId)));
      knownJobs.put(s.jobId(), s.job());
      return s.job();
    });
  }

  private CompletionStage<JobProtocol.JobStatus> status() {
    return answer(AskPattern.ask(master, JobProtocol.GetStatus::new, timeout, system.scheduler()), "the master", timeout);
  }

  /** The master of job {@code jobId}; "": the cluster's master, which passes the command to the newest running job. */
  private ActorRef<JobProtocol.Command> masterOf(String jobId) {
    return jobId.isEmpty() ? master : api.master(jobId);
  }

  private <T> CompletionStage<T> askMaster(String jobId, Function<ActorRef<StatusReply<T>>, JobProtocol.Command> message) {
    return answer(AskPattern.askWithStatus(masterOf(jobId), message::apply, timeout, system.scheduler()), "the master",
        timeout);
  }

  /**
   * {@code stage}, its failure turned into the API's error as an answer of {@code from}. Akka's ask
   * stages run even non-async callbacks on a new thread on a 2-core machine ({@link Asks}): every
   * call's callbacks run on the thread the answer arrives on instead.
   */
  static <T> CompletionStage<T> answer(CompletionStage<T> stage, String from, Duration waited) {
    return Asks.onArrival(stage).handle((v, failure) -> {
      if (failure != null) throw ApiError.fail(ApiError.of(failure, from, waited));
      return v;
    });
  }

  /** Runs {@code body}; a check that throws fails the returned stage instead of the caller. */
  private static <T> CompletionStage<T> call(Supplier<CompletionStage<T>> body) {
    try {
      return body.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
