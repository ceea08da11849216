package io.shardtrain.actors;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.ShardRegion;
import akka.pattern.Patterns;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.CtrModel;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.Resumption;
import io.shardtrain.actors.job.SavedModels;
import io.shardtrain.actors.master.JobDirectory;
import io.shardtrain.actors.metrics.NodeMetrics;
import io.shardtrain.actors.ps.BlockEvents;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.actors.trainer.CtrTrainer;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.persistence.model.TableValues;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The programmatic API: start ShardTrain's roles on an {@link ActorSystem} that is (or will be)
 * a member of an Akka cluster, submit a job, start trainers, and read results.
 *
 * <pre>{@code
 * ShardTrain st = ShardTrain.start(system);            // roles come from akka.cluster.roles
 * ShardTrain.Plan plan = ShardTrain.plan(settings, "job-1", train.dim(), train.size(), 10,
 *     BlockSpec.Mode.SYNC, 2, 262144, -1);
 * st.submit(plan).toCompletableFuture().join();         // initialises every block, then the master
 * st.startTrainer(new Trainer.Setup("t1", st.master(), train, test, () -> CpuBackend.create(1),
 *     TrainerSettings.create(system), listener));
 * }</pre>
 */
public final class ShardTrain {
  private final ActorSystem<?> system;
  private final ActorRef<JobProtocol.Command> master;
  private final Duration timeout;
  private final BlockPulls pulls;
  private static final AtomicInteger JOB_MASTERS = new AtomicInteger();
  /** How the warning of a JVM whose async callbacks each get a new thread begins. */
  public static final String UNPOOLED_CALLBACKS = "This JVM starts a new thread for every asynchronous callback";
  private static final AtomicInteger TRAINERS = new AtomicInteger();
  private final Map<String, ActorRef<JobProtocol.Command>> jobMasters = new ConcurrentHashMap<>();

  private ShardTrain(ActorSystem<?> system, ActorRef<JobProtocol.Command> master) {
    this.system = system;
    this.master = master;
    this.timeout = system.settings().config().getDuration("shardtrain.trainer.ask-timeout");
    this.pulls = new BlockPulls(system, timeout);
  }

  /**
   * Starts this node's part: the shard regions of parameter blocks and of sparse table shards
   * (hosting them on nodes with role {@code ps}, a proxy elsewhere) and the master singleton (on a
   * node with role {@code master}).
   */
  public static ShardTrain start(ActorSystem<?> system) {
    AkkaVersionGuard.require();
    if (system.settings().config().getString("akka.persistence.journal.plugin").isEmpty()) {
      // Else the first block or master to start fails in Akka's log and every ask here times out.
      throw new IllegalStateException("the ActorSystem has no journal: create it with the config of"
          + " io.shardtrain.persistence.journal.JournalConfig.of(config) and call Journal.start(system) before"
          + " ShardTrain.start (samples/.../api/ApiExample.java)");
    }
    if (!Asks.asyncCallbacksPooled()) {
      system.log().warn(UNPOOLED_CALLBACKS + " (the common pool has {} thread): Akka's asks and akka-grpc's handlers"
          + " use them on every call. Start it with -D{}=2.",
          ForkJoinPool.getCommonPoolParallelism(), Asks.COMMON_POOL_PARALLELISM);
    }
    // Starts the node's traffic reporter, which the status view reads on every member.
    NodeMetrics.get(system);
    ParameterBlock.init(system);
    SparseShard.init(system);
    return new ShardTrain(system, JobDirectory.initSingleton(system));
  }

  /** The cluster's master: a command sent here reaches the newest running job (see {@link JobDirectory}). */
  public ActorRef<JobProtocol.Command> master() {
    return master;
  }

  /**
   * The master of job {@code jobId}: what this node sends here reaches that job whichever others
   * run. A local actor that wraps each command in {@link JobProtocol.ToJob}; one per job and node.
   */
  public ActorRef<JobProtocol.Command> master(String jobId) {
    return jobMasters.computeIfAbsent(jobId, id -> system.systemActorOf(
        Behaviors.<JobProtocol.Command>receiveMessage(c -> {
          master.tell(new JobProtocol.ToJob(id, c));
          return Behaviors.same();
        }), "job-master-" + JOB_MASTERS.incrementAndGet() + "-" + URLEncoder.encode(id, StandardCharsets.UTF_8),
        Props.empty()));
  }

  public ActorSystem<?> system() {
    return system;
  }

  /**
   * A job and the initial model whose values the blocks start from; {@code resume}: the checkpoint
   * a resumed job continues from (its values are the model's), or null.
   */
  public record Plan(JobSpec job, Mlp model, OptimizerSpec optimizer, Resumption resume) {}

  /**
   * Plans a job from settings: builds the model with the job's seed (the initial parameters),
   * cuts its parameters into blocks of at most {@code blockSize} floats. With {@code resume-from}
   * the checkpoint is loaded and checked against the job here, before anything starts.
   */
  public static Plan plan(TrainSettings s, String jobId, int inputDim, int trainExamples, int classes,
      BlockSpec.Mode mode, int trainers, int blockSize, long maxStaleness) {
    requireTrainers(trainers);
    OptimizerSpec optimizer = OptimizerSpec.parse(s.optimizer()).withWeightDecay((float) s.weightDecay());
    Mlp model = Mlp.create(CpuBackend.create(1), inputDim, s.hidden(), classes, Activation.parse(s.activation()),
        s.initialization(), s.seed());
    if (s.initFrom() != null) SavedModels.initFrom(s.initFrom(), model);
    List<String> blocks = BlockLayout.of(model, blockSize, jobId).stream().map(BlockSlice::entityId).toList();
    long stepsPerTrainer = s.stepsPerTrainer(trainExamples, trainers);
    // Sync and all-reduce: one update per step; async: one per push of every trainer.
    long updates = mode.lockstep() ? stepsPerTrainer : stepsPerTrainer * trainers;
    List<Integer> hidden = new ArrayList<>();
    for (int h : s.hidden()) hidden.add(h);
    JobSpec job = new JobSpec(jobId, s.dataset(), trainExamples, inputDim, classes, hidden, s.activation(),
        s.seed(), mode, trainers, s.batch(), s.steps() > 0 ? 0 : s.epochs(), s.steps(), s.optimizer(),
        (float) s.lr(), s.lrScheduleFor(updates), (float) s.weightDecay(), maxStaleness, blockSize, blocks, null,
        s.init());
    Resumption resume = s.resumeFrom() == null ? null : Resumption.load(s.resumeFrom(), job, model, optimizer);
    return new Plan(job, model, optimizer, resume);
  }

  /** The model's parameters as a snapshot with the job's description, for {@link ModelFiles#save}. */
  public static ModelSnapshot snapshot(Mlp model, JobSpec job, long version) {
    return job.snapshot(model, version);
  }

  /**
   * Initialises every block from the plan's model (idempotent), then submits the job to the master.
   * Fails, placing nothing, while fewer than {@code shardtrain.ps.min-nodes} {@code ps} nodes have
   * joined sharding (the caller retries).
   */
  public CompletionStage<Done> submit(Plan plan) {
    return onceEnoughPsNodes(plan.job().jobId(), () -> place(plan));
  }

  /**
   * Runs {@code place} once the master said job {@code jobId} may be submitted (it did not finish
   * before) and {@code shardtrain.ps.min-nodes} ps nodes joined sharding; fails, placing nothing, before.
   */
  private CompletionStage<Done> onceEnoughPsNodes(String jobId, Supplier<CompletionStage<Done>> place) {
    int minNodes = PsSettings.create(system).minNodes();
    CompletionStage<Done> allowed = AskPattern.askWithStatus(master, r -> new JobProtocol.MaySubmit(jobId, r), timeout,
        system.scheduler());
    if (minNodes <= 1) return allowed.thenCompose(ok -> place.get());
    return allowed.thenCompose(ok -> psNodes()).thenCompose(n -> n >= minNodes ? place.get()
        : CompletableFuture.failedFuture(new IllegalStateException("only " + n + " of the " + minNodes
            + " ps nodes (shardtrain.ps.min-nodes) have joined sharding; the job's blocks are not placed yet")));
  }

  /**
   * How many {@code ps} nodes' shard regions the sharding coordinators know (0 while one is
   * starting): the fewer of parameter blocks' and table shards' regions, since entities placed
   * before a region registers are moved to it by a rebalance later.
   */
  public CompletionStage<Integer> psNodes() {
    return regions(ParameterBlock.ENTITY_KEY.name()).thenCombine(regions(SparseShard.ENTITY_KEY.name()), Math::min);
  }

  private CompletionStage<Integer> regions(String typeName) {
    akka.actor.ActorRef region = akka.cluster.sharding.ClusterSharding.get(Adapter.toClassic(system)).shardRegion(typeName);
    return Patterns.ask(region, ShardRegion.getCurrentRegionsInstance(), timeout)
        .thenApply(r -> ((ShardRegion.CurrentRegions) r).getRegions().size());
  }

  private CompletionStage<Done> place(Plan plan) {
    Map<String, float[]> values = new HashMap<>();
    for (Parameter p : plan.model().parameters()) values.put(p.name(), p.value().data());
    return placeBlocks(plan.job(), plan.job().layout(plan.model()), values, plan.optimizer(), plan.resume())
        .thenCompose(x -> submitJob(plan.job(), plan.resume() == null ? null : plan.resume().point()));
  }

  /**
   * Initialises every block of {@code slices} from {@code values} (by parameter name), or resumes
   * it from {@code resume} (when not null); idempotent.
   */
  private CompletableFuture<Void> placeBlocks(JobSpec job, List<BlockSlice> slices, Map<String, float[]> values,
      OptimizerSpec optimizer, Resumption resume) {
    List<CompletableFuture<Long>> inits = new ArrayList<>();
    for (BlockSlice slice : slices) {
      BlockSpec spec = BlockSpec.of(slice, optimizer, job.lrSchedule(), job.lr(), job.mode(), job.maxStaleness(),
          job.examplesPerUpdate());
      float[] init = new float[slice.length()];
      System.arraycopy(values.get(slice.parameter()), slice.offset(), init, 0, slice.length());
      BlockEvents.Resumed resumed = resume == null ? null : resume.block(spec);
      inits.add(ParameterBlock.entityRef(system, slice.entityId())
          .<Long>askWithStatus(replyTo -> resumed == null ? new BlockProtocol.Initialize(spec, init, replyTo)
              : new BlockProtocol.Resume(resumed, replyTo), timeout)
          .toCompletableFuture());
    }
    return CompletableFuture.allOf(inits.toArray(CompletableFuture[]::new));
  }

  private CompletionStage<Done> submitJob(JobSpec job, JobProtocol.ResumePoint resumeFrom) {
    return AskPattern.<JobProtocol.Command, Done>askWithStatus(master,
        replyTo -> new JobProtocol.SubmitJob(job, resumeFrom, replyTo), timeout, system.scheduler());
  }

  /** Refuses a job of no trainers, which would never take a step. */
  public static void requireTrainers(int trainers) {
    if (trainers < 1) throw new IllegalArgumentException("shardtrain.train.trainers must be at least 1, got " + trainers);
  }

  /**
   * A click-through job, the initial dense part of its factorization machine, and the rows its
   * table starts from: a saved model's ({@code init-from}), else none (rows start when first pushed).
   */
  public record CtrPlan(JobSpec job, float[] dense, OptimizerSpec optimizer, TableValues rows) {}

  /** Why a click-through job does not resume. */
  public static final String CTR_DOES_NOT_RESUME = "resume-from continues an MLP from a checkpoint; a click-through"
      + " job's checkpoints would need its rows' optimizer state, which is not saved: start it from a saved model"
      + " with init-from instead (its rows and dense part, fresh optimizer state)";

  /**
   * Plans a click-through job on {@code train}: a factorization machine of {@code ctr}'s shape, its
   * dense part cut into blocks of at most {@code blockSize} floats, its rows in a table of
   * {@code tableShards} shards over the data's id space; the job remembers the data's fingerprint.
   */
  public static CtrPlan planCtr(TrainSettings s, CtrSettings ctr, String jobId, CtrDataset train, BlockSpec.Mode mode,
      int trainers, int blockSize, long maxStaleness, int tableShards) {
    return planCtr(s, ctr, jobId, train.fields(), train.denseDim(), train.hashSpace(), train.size(),
        train.fingerprint(), mode, trainers, blockSize, maxStaleness, tableShards);
  }

  /** {@link #planCtr(TrainSettings, CtrSettings, String, CtrDataset, BlockSpec.Mode, int, int, long, int)} from the data's shape. */
  public static CtrPlan planCtr(TrainSettings s, CtrSettings ctr, String jobId, int fields, int denseDim,
      long hashSpace, int trainExamples, long fingerprint, BlockSpec.Mode mode, int trainers, int blockSize,
      long maxStaleness, int tableShards) {
    if (s.resumeFrom() != null) throw new IllegalArgumentException(CTR_DOES_NOT_RESUME);
    requireTrainers(trainers);
    OptimizerSpec optimizer = OptimizerSpec.parse(s.optimizer()).withWeightDecay((float) s.weightDecay());
    CtrModel model = new CtrModel(fields, denseDim, ctr.factors(), hashSpace, tableShards, (float) ctr.rowLr(),
        (float) ctr.rowInitialAccumulator(), (float) ctr.initStd(), ctr.aucBins(), fingerprint);
    float[] dense = model.machine().initialDense((float) ctr.initStd(), s.seed());
    TableValues rows = null;
    if (s.initFrom() != null) {
      ModelSnapshot saved = SavedModels.load(s.initFrom());
      model.checkSaved(saved, s.initFrom());
      dense = saved.parameter(JobSpec.CTR_DENSE).values();
      rows = saved.table(CtrModel.ROWS);
    }
    long updates = mode.lockstep() ? s.stepsPerTrainer(trainExamples, trainers)
        : s.stepsPerTrainer(trainExamples, trainers) * trainers;
    List<String> blocks = BlockLayout.of(List.of(new ParamShape(JobSpec.CTR_DENSE, dense.length)), blockSize, jobId)
        .stream().map(BlockSlice::entityId).toList();
    JobSpec job = new JobSpec(jobId, s.dataset(), trainExamples, denseDim, 2, List.of(), s.activation(), s.seed(),
        mode, trainers, s.batch(), s.steps() > 0 ? 0 : s.epochs(), s.steps(), s.optimizer(), (float) s.lr(),
        s.lrScheduleFor(updates), (float) s.weightDecay(), maxStaleness, blockSize, blocks, model);
    return new CtrPlan(job, dense, optimizer, rows);
  }

  /**
   * Initialises the dense blocks and the table's shards of a click-through job (idempotent), then
   * submits it to the master; fails like {@link #submit(Plan)} while too few {@code ps} nodes joined.
   */
  public CompletionStage<Done> submit(CtrPlan plan) {
    try {
      CtrModel.requireExactDurability(PsSettings.create(system).durability());
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(e);
    }
    return onceEnoughPsNodes(plan.job().jobId(), () -> {
      JobSpec job = plan.job();
      TableSpec table = job.table();
      List<CompletableFuture<SparseProtocol.InitReply>> shards = new ArrayList<>();
      for (int s = 0; s < table.shards(); s++) {
        int shard = s;
        shards.add(SparseShard.entityRef(system, table.entityId(s)).<SparseProtocol.InitReply>ask(
            replyTo -> new SparseProtocol.InitShard(table, shard, replyTo), timeout).toCompletableFuture());
      }
      return placeBlocks(job, job.denseLayout(), Map.of(JobSpec.CTR_DENSE, plan.dense()), plan.optimizer(), null)
          .thenCompose(x -> CompletableFuture.allOf(shards.toArray(CompletableFuture[]::new)))
          .thenCompose(x -> {
            for (CompletableFuture<SparseProtocol.InitReply> r : shards) {
              if (r.join() instanceof SparseProtocol.Refused refused) {
                throw new IllegalStateException("table " + table.name() + " refused: " + refused.message());
              }
            }
            return plan.rows() == null ? CompletableFuture.completedFuture(null)
                : TableLoad.load(system, table, plan.rows(), timeout);
          })
          .thenCompose(x -> submitJob(job, null));
    });
  }

  /** Spawns a trainer on this node, on the trainer dispatcher (compute blocks its thread). */
  public ActorRef<Trainer.Command> startTrainer(Trainer.Setup setup) {
    return system.systemActorOf(Trainer.create(setup), trainerName(setup.trainerId()),
        DispatcherSelector.fromConfig("shardtrain.trainer.dispatcher"));
  }

  /** Spawns a click-through job's trainer on this node, on the trainer dispatcher. */
  public ActorRef<Trainer.Command> startTrainer(CtrTrainer.Setup setup) {
    return system.systemActorOf(CtrTrainer.create(setup), trainerName(setup.trainerId()),
        DispatcherSelector.fromConfig("shardtrain.trainer.dispatcher"));
  }

  /** A node's trainer of one id trains job after job: each trainer actor gets a name of its own. */
  private static String trainerName(String trainerId) {
    return "trainer-" + URLEncoder.encode(trainerId, StandardCharsets.UTF_8) + "-" + TRAINERS.incrementAndGet();
  }

  /** The status of the newest running job (else the newest finished one; none submitted: an empty status). */
  public CompletionStage<JobProtocol.JobStatus> status() {
    return AskPattern.ask(master, JobProtocol.GetStatus::new, timeout, system.scheduler());
  }

  /** The status of job {@code jobId}; an empty status when the cluster has no such job. */
  public CompletionStage<JobProtocol.JobStatus> status(String jobId) {
    return AskPattern.ask(master, r -> new JobProtocol.ToJob(jobId, new JobProtocol.GetStatus(r)), timeout,
        system.scheduler());
  }

  /** The cluster's jobs, oldest first. */
  public CompletionStage<List<JobProtocol.JobEntry>> jobs() {
    return AskPattern.<JobProtocol.Command, JobProtocol.JobList>ask(master, JobProtocol.ListJobs::new, timeout,
        system.scheduler()).thenApply(JobProtocol.JobList::jobs);
  }

  /**
   * Cancels job {@code jobId}: its trainers finish the step they are in and leave. Completes with the
   * job's status once the cancel is journaled. The id is required: a cancel meant for one job must
   * not reach whichever runs.
   */
  public CompletionStage<JobProtocol.JobStatus> cancel(String jobId) {
    if (jobId == null || jobId.isBlank()) throw new IllegalArgumentException("cancel-job needs a job id");
    return AskPattern.askWithStatus(master, r -> new JobProtocol.ToJob(jobId, new JobProtocol.CancelJob(r)), timeout,
        system.scheduler());
  }

  /** Deletes finished job {@code jobId}'s journal (its master's, blocks' and table shards' events and snapshots). */
  public CompletionStage<JobProtocol.JobDeleted> deleteJob(String jobId) {
    return AskPattern.askWithStatus(master, r -> new JobProtocol.DeleteJob(jobId, r), timeout.multipliedBy(5),
        system.scheduler());
  }

  /**
   * Takes a globally consistent checkpoint of the running sync job now: every block at one step,
   * with optimizer slots and the master's reader offsets, written by the master's node to
   * {@code dir} (null or blank: {@code shardtrain.checkpoint.dir}/JOB/step-N). Completes with the
   * step and the directory once the checkpoint is committed.
   */
  public CompletionStage<JobProtocol.CheckpointWritten> checkpoint(String dir) {
    return checkpoint("", dir);
  }

  /** As {@link #checkpoint(String)}, of job {@code jobId} (blank: the newest running job). */
  public CompletionStage<JobProtocol.CheckpointWritten> checkpoint(String jobId, String dir) {
    Duration wait = system.settings().config().getDuration("shardtrain.checkpoint.timeout").plus(timeout);
    return AskPattern.askWithStatus(master, replyTo -> {
      JobProtocol.Command take = new JobProtocol.TakeCheckpoint(dir == null ? "" : dir, replyTo);
      return jobId == null || jobId.isBlank() ? take : new JobProtocol.ToJob(jobId, take);
    }, wait, system.scheduler());
  }

  /** Every block's values at version >= {@code minVersion}, written into {@code model}'s parameters. */
  public CompletionStage<Long> pullInto(Mlp model, JobSpec job, long minVersion) {
    List<CompletableFuture<BlockProtocol.BlockValues>> pulls = new ArrayList<>();
    for (BlockSlice slice : job.layout(model)) {
      pulls.add(pull(slice.entityId(), minVersion).toCompletableFuture());
    }
    return CompletableFuture.allOf(pulls.toArray(CompletableFuture[]::new))
        .thenApply(x -> writeInto(model, pulls.stream().map(CompletableFuture::join).toList()));
  }

  /** Writes the blocks' {@code values} into {@code model}'s parameters; the lowest version among them. */
  private static long writeInto(Mlp model, java.util.Collection<BlockProtocol.BlockValues> values) {
    Map<String, Parameter> byName = new HashMap<>();
    for (Parameter p : model.parameters()) byName.put(p.name(), p);
    long version = Long.MAX_VALUE;
    for (BlockProtocol.BlockValues v : values) {
      System.arraycopy(v.values(), 0, byName.get(v.parameter()).value().data(), v.offset(), v.values().length);
      version = Math.min(version, v.version());
    }
    return version;
  }


  /**
   * Reads {@code job}'s blocks into {@code model} all at one version (a sync job that trains: see
   * {@link ConsistentRead}), at most 5 reads; completes with that version, or fails with
   * {@link ConsistentRead.Inconsistent} naming the blocks that lag.
   */
  public CompletionStage<Long> pullConsistent(Mlp model, JobSpec job) {
    List<String> blocks = job.layout(model).stream().map(BlockSlice::entityId).toList();
    return new ConsistentRead(blocks, this::pull, 5).read().thenApply(read -> writeInto(model, read.values()));
  }

  /**
   * The values of block {@code entityId} at version >= {@code minVersion}. With this node's bulk
   * channel on they come over it where the block's node can send them, and inline again if that fails.
   */
  public CompletionStage<BlockProtocol.BlockValues> pull(String entityId, long minVersion) {
    return pulls.pull(entityId, minVersion);
  }

  /**
   * A click-through job's model: its dense part from the blocks and its table's stored rows from
   * every shard, in id order. For a job that is done or cancelled; a training job's shards move on
   * between the pages of their rows.
   */
  public CompletionStage<ModelSnapshot> ctrModel(JobSpec job) {
    return new CtrModelRead(system, pulls, timeout).read(job);
  }

  /** Statistics of every block of the job. */
  public CompletionStage<List<BlockProtocol.BlockStats>> blockStats(JobSpec job) {
    List<CompletableFuture<BlockProtocol.BlockStats>> stats = new ArrayList<>();
    for (String id : job.blocks()) {
      stats.add(ParameterBlock.entityRef(system, id)
          .<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, timeout).toCompletableFuture());
    }
    return CompletableFuture.allOf(stats.toArray(CompletableFuture[]::new))
        .thenApply(x -> stats.stream().map(CompletableFuture::join).toList());
  }
}
