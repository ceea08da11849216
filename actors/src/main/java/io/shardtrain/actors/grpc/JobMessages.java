package io.shardtrain.actors.grpc;

import akka.actor.Address;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigIncludeContext;
import com.typesafe.config.ConfigIncluder;
import com.typesafe.config.ConfigIncluderClasspath;
import com.typesafe.config.ConfigIncluderFile;
import com.typesafe.config.ConfigIncluderURL;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigResolveOptions;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.ShardTrainConfig;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.BlockState;
import io.shardtrain.grpc.ClickThroughShape;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.Lease;
import io.shardtrain.grpc.LeaseTaskReply;
import io.shardtrain.grpc.NoTask;
import io.shardtrain.grpc.NotRegistered;
import io.shardtrain.grpc.Parameter;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.RegisterTrainerReply;
import io.shardtrain.grpc.TrainerProgress;
import io.shardtrain.grpc.WaitForTrainers;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Between the job's records and the API's messages: plans a submitted job, and converts jobs,
 * registrations, leases and push acknowledgements. Plain code, no actor.
 */
final class JobMessages {
  /** The mode named {@code name} (any case), or an error listing the modes there are. */
  static BlockSpec.Mode mode(String name) {
    for (BlockSpec.Mode m : BlockSpec.Mode.values()) {
      if (m.name().equalsIgnoreCase(name.trim())) return m;
    }
    throw new IllegalArgumentException("shardtrain.train.mode must be one of " + Arrays.stream(BlockSpec.Mode.values())
        .map(m -> m.name().toLowerCase(Locale.ROOT)).toList() + ", got '" + name + "'");
  }

  /** Each job's blocks by id, computed once from its model's shapes. */
  private final Map<String, Map<String, BlockSlice>> layouts = new ConcurrentHashMap<>();
  /** Each job's parameters and their shapes, in the model's order. */
  private final Map<String, List<Parameter>> parameters = new ConcurrentHashMap<>();

  /**
   * The plan of a job from its HOCON text (shardtrain.train.*, shardtrain.ps.block-size and
   * max-staleness) layered over {@code node}, the serving node's configuration, and the data set's shape.
   */
  static ShardTrain.Plan plan(String jobConfig, DatasetShape shape, Config node) {
    Config parsed = parseJob(jobConfig);
    if (shape == null || shape.getInputDim() < 1 || shape.getTrainExamples() < 1 || shape.getClasses() < 2) {
      throw ApiError.fail(new ApiError.BadRequest("a job needs the data set's shape: input_dim >= 1, "
          + "train_examples >= 1 and classes >= 2"));
    }
    try {
      Config config = parsed.withFallback(node).resolve();
      ShardTrainConfig.validate(config);
      TrainSettings s = TrainSettings.fromConfig(config);
      long floats = modelFloats(shape.getInputDim(), s.hidden(), shape.getClasses());
      long maxFloats = node.getLong("shardtrain.grpc.max-model-floats");
      if (floats > maxFloats) {
        throw ApiError.fail(new ApiError.BadRequest("a model of input_dim " + shape.getInputDim() + ", hidden "
            + Arrays.toString(s.hidden()) + " and " + shape.getClasses() + " classes has "
            + (floats == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(floats))
            + " parameters, more than shardtrain.grpc.max-model-floats = " + maxFloats));
      }
      PsSettings ps = PsSettings.fromConfig(config);
      BlockSpec.Mode mode = mode(config.getString("shardtrain.train.mode"));
      String jobId = config.getString("shardtrain.train.job-id").trim();
      if (jobId.isEmpty()) jobId = "job-" + System.currentTimeMillis();
      return ShardTrain.plan(s, jobId, shape.getInputDim(), shape.getTrainExamples(), shape.getClasses(),
          mode, config.getInt("shardtrain.train.trainers"), ps.blockSize(),
          ps.maxStaleness());
    } catch (ConfigException e) {
      throw ApiError.fail(new ApiError.BadRequest("job description: " + e.getMessage()));
    } catch (IllegalArgumentException e) {
      throw ApiError.fail(new ApiError.BadRequest("job description: " + e.getMessage()));
    }
  }

  /**
   * A job description resolved on its own, without includes or the environment: the reply and its
   * errors echo the job's values, so ${HOME} or include file("...") would read the node's
   * environment and files out to the caller.
   */
  private static Config parseJob(String jobConfig) {
    try {
      return ConfigFactory.parseString(jobConfig == null ? "" : jobConfig,
          ConfigParseOptions.defaults().setIncluder(NoIncludes.INSTANCE)).resolve(ConfigResolveOptions.noSystem());
    } catch (ConfigException e) {
      throw ApiError.fail(new ApiError.BadRequest("job description does not parse: " + e.getMessage()));
    }
  }

  /** Weights and biases of an MLP of these widths; {@link Long#MAX_VALUE} when that exceeds a long. */
  static long modelFloats(int inputDim, int[] hidden, int classes) {
    long floats = 0;
    int in = inputDim;
    try {
      for (int i = 0; i <= hidden.length; i++) {
        int out = i < hidden.length ? hidden[i] : classes;
        floats = Math.addExact(floats, Math.addExact(Math.multiplyExact((long) in, out), out));
        in = out;
      }
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
    return floats;
  }

  /** Refuses every include of a submitted job description, whatever its kind. */
  private enum NoIncludes implements ConfigIncluder, ConfigIncluderFile, ConfigIncluderURL, ConfigIncluderClasspath {
    INSTANCE;

    @Override
    public ConfigIncluder withFallback(ConfigIncluder fallback) {
      return this;
    }

    @Override
    public ConfigObject include(ConfigIncludeContext context, String what) {
      throw refused(what);
    }

    @Override
    public ConfigObject includeFile(ConfigIncludeContext context, java.io.File what) {
      throw refused(what.toString());
    }

    @Override
    public ConfigObject includeURL(ConfigIncludeContext context, java.net.URL what) {
      throw refused(what.toString());
    }

    @Override
    public ConfigObject includeResources(ConfigIncludeContext context, String what) {
      throw refused(what);
    }

    private static ConfigException refused(String what) {
      return new ConfigException.Generic("a job description may not include anything (it includes " + what + ")");
    }
  }

  /** The blocks of {@code job} by id, in the model's order. */
  Map<String, BlockSlice> layout(JobSpec job) {
    return layouts.computeIfAbsent(job.jobId(), id -> {
      Map<String, BlockSlice> byId = new LinkedHashMap<>();
      List<BlockSlice> slices = job.ctr() != null ? job.denseLayout()
          : job.layout(job.newModel(CpuBackend.create(1)));
      for (BlockSlice b : slices) byId.put(b.entityId(), b);
      return byId;
    });
  }

  /** The parameters of {@code job}'s model with their shapes, in the model's order. */
  List<Parameter> parameters(JobSpec job) {
    return parameters.computeIfAbsent(job.jobId(), id -> {
      List<Parameter> list = new ArrayList<>();
      if (job.ctr() != null) {
        return List.of(Parameter.newBuilder().setName(JobSpec.CTR_DENSE).addShape(job.ctr().machine().denseSize())
            .build());
      }
      for (var p : job.newModel(CpuBackend.create(1)).parameters()) {
        Parameter.Builder b = Parameter.newBuilder().setName(p.name());
        for (int d : p.shape()) b.addShape(d);
        list.add(b.build());
      }
      return List.copyOf(list);
    });
  }

  Job job(JobSpec j) {
    Job.Builder b = Job.newBuilder()
        .setJobId(j.jobId()).setDataset(j.dataset()).setTrainExamples(j.trainExamples()).setInputDim(j.inputDim())
        .setClasses(j.classes()).addAllHidden(j.hidden()).setActivation(j.activation()).setSeed(j.seed())
        .setMode(j.mode().name().toLowerCase(Locale.ROOT)).setTrainers(j.trainers()).setBatch(j.batch())
        .setEpochs(j.epochs()).setSteps(j.steps()).setOptimizer(j.optimizer()).setLr(j.lr())
        .setLrSchedule(j.lrSchedule()).setWeightDecay(j.weightDecay()).setMaxStaleness(j.maxStaleness())
        .setBlockSize(j.blockSize()).setInit(j.initialization().label());
    for (BlockSlice s : layout(j).values()) {
      b.addBlocks(Block.newBuilder().setBlockId(s.entityId()).setParameter(s.parameter()).setIndex(s.index())
          .setOffset(s.offset()).setLength(s.length()));
    }
    if (j.table() != null) {
      b.setTable(io.shardtrain.grpc.SparseTable.newBuilder().setName(j.table().name()).setShards(j.table().shards())
          .setRows(j.table().rows()).setDim(j.table().dim()).setMode(j.table().mode().name().toLowerCase(Locale.ROOT)));
    }
    return b.addAllParameters(parameters(j)).build();
  }

  /** A table's answers to a push as the API's: the least advanced outcome over the shards, their lowest version. */
  static io.shardtrain.grpc.SparsePushReply sparsePushed(List<SparseProtocol.PushReply> replies) {
    PushReply.Outcome outcome = PushReply.Outcome.DUPLICATE;
    long version = Long.MAX_VALUE;
    for (SparseProtocol.PushReply r : replies) {
      if (r == null) continue;
      PushReply.Outcome o;
      long v;
      if (r instanceof SparseProtocol.Applied a) {
        o = PushReply.Outcome.APPLIED;
        v = a.version();
      } else if (r instanceof SparseProtocol.Accepted a) {
        o = PushReply.Outcome.ACCEPTED;
        v = a.version();
      } else if (r instanceof SparseProtocol.Stale st) {
        o = PushReply.Outcome.STALE;
        v = st.version();
      } else if (r instanceof SparseProtocol.Duplicate d) {
        o = PushReply.Outcome.DUPLICATE;
        v = d.version();
      } else {
        throw new IllegalStateException("unexpected shard reply " + r);
      }
      outcome = rank(o) < rank(outcome) ? o : outcome;
      version = Math.min(version, v);
    }
    return io.shardtrain.grpc.SparsePushReply.newBuilder().setOutcome(outcome)
        .setVersion(version == Long.MAX_VALUE ? 0 : version).build();
  }

  /** Which outcome a push of several shards reports: a stale or held part before an applied one. */
  private static int rank(PushReply.Outcome o) {
    return switch (o) {
      case STALE -> 0;
      case ACCEPTED -> 1;
      case APPLIED -> 2;
      default -> 3;
    };
  }

  RegisterTrainerReply registration(JobProtocol.Registration r) {
    return RegisterTrainerReply.newBuilder().setJob(job(r.job())).setMembershipEpoch(r.membershipEpoch())
        .addAllMembers(r.members()).setLastStep(r.lastStep()).setGeneration(r.generation()).build();
  }

  static LeaseTaskReply lease(JobProtocol.TaskReply reply) {
    LeaseTaskReply.Builder b = LeaseTaskReply.newBuilder();
    if (reply instanceof JobProtocol.Lease l) {
      b.setLease(Lease.newBuilder().setEpoch(l.epoch()).setTask(l.task()).setFrom(l.from()).setTo(l.to())
          .setOffset(l.offset()).putAllSkip(l.skip()));
    } else if (reply instanceof JobProtocol.WaitForTrainers w) {
      b.setWait(WaitForTrainers.newBuilder().setRegistered(w.registered()).setExpected(w.expected()));
    } else if (reply instanceof JobProtocol.NoTask n) {
      b.setNoTask(NoTask.newBuilder().setJobDone(n.jobDone()));
    } else {
      b.setNotRegistered(NotRegistered.getDefaultInstance());
    }
    return b.build();
  }

  static PushReply pushAck(BlockProtocol.PushAck ack) {
    PushReply.Outcome outcome;
    if (ack instanceof BlockProtocol.Applied) outcome = PushReply.Outcome.APPLIED;
    else if (ack instanceof BlockProtocol.Accepted) outcome = PushReply.Outcome.ACCEPTED;
    else if (ack instanceof BlockProtocol.Duplicate) outcome = PushReply.Outcome.DUPLICATE;
    else if (ack instanceof BlockProtocol.Stale) outcome = PushReply.Outcome.STALE;
    else if (ack instanceof BlockProtocol.Skipped) outcome = PushReply.Outcome.SKIPPED;
    else outcome = PushReply.Outcome.ROLLED_BACK;
    return PushReply.newBuilder().setOutcome(outcome).setVersion(ack.version()).build();
  }

  static BlockState blockState(BlockProtocol.BlockStats s) {
    return BlockState.newBuilder().setBlockId(s.entityId()).setAnswered(true).setVersion(s.version())
        .setUpdates(s.updates()).setPendingStep(s.pendingStep()).addAllWaitingFor(s.waitingFor())
        .setMembershipEpoch(s.membershipEpoch()).setPendingPulls(s.pendingPulls()).setLastError(s.lastError())
        .setLastErrorAtMillis(s.lastErrorAtMillis()).build();
  }

  /**
   * The master's trainer rows; a trainer's node is the address of the actor the master talks to it
   * through, which is {@code here} (the serving node) when that actor is local to it.
   */
  static List<TrainerProgress> trainerProgress(List<JobProtocol.TrainerProgress> rows, Address here) {
    List<TrainerProgress> out = new ArrayList<>();
    for (JobProtocol.TrainerProgress p : rows) {
      Address node = p.ref() == null || !p.ref().path().address().hasGlobalScope() ? here : p.ref().path().address();
      out.add(TrainerProgress.newBuilder().setTrainerId(p.trainerId()).setNode(node.toString()).setEpoch(p.epoch())
          .setTask(p.task()).setOffset(p.offset()).setTaskLength(p.length()).setLastStep(p.lastStep()).build());
    }
    return out;
  }

  /**
   * The plan of a click-through job from its HOCON text (shardtrain.train.*, .ctr, shardtrain.ps.*)
   * over {@code node} and the data's shape: a factorization machine over a table of
   * {@code shardtrain.train.ctr.table-shards} shards, else {@code shardtrain.ps.min-nodes}.
   */
  static ShardTrain.CtrPlan ctrPlan(String jobConfig, DatasetShape shape, Config node) {
    ClickThroughShape ctr = shape.getClickThrough();
    if (shape.getInputDim() < 0 || shape.getTrainExamples() < 1 || ctr.getFields() < 1 || ctr.getHashSpace() < 1) {
      throw ApiError.fail(new ApiError.BadRequest("a click-through job needs the data's shape: input_dim >= 0,"
          + " train_examples >= 1, fields >= 1 and hash_space >= 1"));
    }
    try {
      Config config = parseJob(jobConfig).withFallback(node).resolve();
      ShardTrainConfig.validate(config);
      TrainSettings s = TrainSettings.fromConfig(config);
      CtrSettings c = CtrSettings.fromConfig(config);
      // Bias, a weight and factors per dense feature, built in this node's heap like a dense model.
      long denseFloats = 1 + shape.getInputDim() * (1L + c.factors());
      long maxFloats = node.getLong("shardtrain.grpc.max-model-floats");
      if (denseFloats > maxFloats) {
        throw ApiError.fail(new ApiError.BadRequest("a click-through model of input_dim " + shape.getInputDim()
            + " and " + c.factors() + " factors has " + denseFloats
            + " dense parameters, more than shardtrain.grpc.max-model-floats = " + maxFloats));
      }
      PsSettings ps = PsSettings.fromConfig(config);
      String jobId = config.getString("shardtrain.train.job-id").trim();
      if (jobId.isEmpty()) jobId = "job-" + System.currentTimeMillis();
      return ShardTrain.planCtr(s, c, jobId, ctr.getFields(), shape.getInputDim(), ctr.getHashSpace(),
          shape.getTrainExamples(), ctr.getFingerprint(), mode(config.getString("shardtrain.train.mode")),
          config.getInt("shardtrain.train.trainers"), ps.blockSize(), ps.maxStaleness(),
          c.tableShards(ps.minNodes()));
    } catch (ConfigException | IllegalArgumentException e) {
      throw ApiError.fail(new ApiError.BadRequest("job description: " + e.getMessage()));
    }
  }
}
