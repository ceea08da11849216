package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.grpc.GrpcClientSettings;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import akka.stream.javadsl.Sink;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.BlockState;
import io.shardtrain.grpc.BlockValues;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.HeartbeatReply;
import io.shardtrain.grpc.HeartbeatRequest;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.Lease;
import io.shardtrain.grpc.LeaseTaskReply;
import io.shardtrain.grpc.LeaseTaskRequest;
import io.shardtrain.grpc.LeaveJobRequest;
import io.shardtrain.grpc.Parameter;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.RegisterTrainerReply;
import io.shardtrain.grpc.RegisterTrainerRequest;
import io.shardtrain.grpc.ReportProgressRequest;
import io.shardtrain.grpc.ShardTrainApiClient;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.StepOffset;
import io.shardtrain.grpc.SubmitJobReply;
import io.shardtrain.grpc.SubmitJobRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real single-node cluster (blocks, master) serving the gRPC API on a free port, driven through
 * the generated client: a job submitted, two trainers registered and leased, one sync step pushed
 * and pulled back, the barrier inspected half-way, progress reported, one trainer leaving, and the
 * errors' status codes.
 */
class GrpcApiTest {
  static final String JOB = """
      shardtrain.train { job-id = "grpc-job", hidden = [4], optimizer = sgd, lr = 0.5, lr-schedule = constant,
        weight-decay = 0, batch = 8, steps = 5, trainers = 2, mode = sync }
      shardtrain.ps.block-size = 8
      """;
  static final DatasetShape SHAPE = DatasetShape.newBuilder().setInputDim(3).setTrainExamples(40).setClasses(2).build();

  static ActorTestKit kit;
  static ShardTrainApiClient client;
  static Job job;

  /** A one-node cluster (ps, master) in memory whose gRPC API {@code client} calls. */
  record Node(ActorTestKit kit, ShardTrainApiClient client, ShardTrain api) {}

  static Node startNode(String name) throws Exception {
    return startNode(name, "");
  }

  /** {@link #startNode(String)} with {@code hocon} over its settings. */
  static Node startNode(String name, String hocon) throws Exception {
    ActorTestKit kit = ActorTestKit.create(name, ConfigFactory.parseString(hocon).withFallback(ConfigFactory.parseString("""
          akka.actor.provider = cluster
          akka.remote.artery.canonical.port = 0
          akka.remote.artery.canonical.hostname = 127.0.0.1
          akka.cluster.roles = [ps, master]
          akka.cluster.jmx.multi-mbeans-in-same-jvm = on
          akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
          shardtrain.grpc.port = 0
          """)).withFallback(PersistenceTestKitPlugin.config()).withFallback(PersistenceTestKitSnapshotPlugin.config())
        .withFallback(ConfigFactory.load()));
    ShardTrain st = ShardTrain.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (cluster.selfMember().status() != MemberStatus.up()) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("cluster did not form");
      Thread.sleep(50);
    }
    var binding = GrpcServer.startIfConfigured(st).orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    int port = binding.localAddress().getPort();
    return new Node(kit, ShardTrainApiClient.create(
        GrpcClientSettings.connectToServiceAt("127.0.0.1", port, kit.system()).withTls(false), kit.system()), st);
  }

  @BeforeAll
  static void startNodeAndSubmit() throws Exception {
    Node node = startNode("GrpcApiTest");
    kit = node.kit();
    client = node.client();
    SubmitJobReply submitted = get(client.submitJob(SubmitJobRequest.newBuilder().setJobConfig(JOB).setShape(SHAPE).build()));
    job = submitted.getJob();
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) client.close().toCompletableFuture().get(10, TimeUnit.SECONDS);
    if (kit != null) kit.shutdownTestKit();
  }

  static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** The gRPC status a call failed with. */
  static Status failure(CompletionStage<?> stage) throws Exception {
    try {
      stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StatusRuntimeException s) return s.getStatus();
      throw e;
    }
    throw new AssertionError("the call succeeded");
  }

  static Map<String, BlockValues> pull(long minVersion) throws Exception {
    List<BlockValues> all = get(client.pullParameters(PullRequest.newBuilder().setJobId("grpc-job")
        .setMinVersion(minVersion).build()).runWith(Sink.seq(), kit.system()));
    Map<String, BlockValues> byId = new HashMap<>();
    for (BlockValues v : all) byId.put(v.getBlockId(), v);
    assertEquals(all.size(), byId.size(), "each block once");
    return byId;
  }

  static float[] floats(BlockValues v) {
    float[] f = new float[v.getValuesCount()];
    for (int i = 0; i < f.length; i++) f[i] = v.getValues(i);
    return f;
  }

  /** Exact in binary: 0.25 * (j + 1) - 1. */
  static float[] gradient(int length) {
    float[] g = new float[length];
    for (int j = 0; j < length; j++) g[j] = 0.25f * (j + 1) - 1f;
    return g;
  }

  static PushRequest.Builder push(String trainer, Block b, float[] values) {
    PushRequest.Builder p = PushRequest.newBuilder().setJobId("grpc-job").setBlockId(b.getBlockId()).setTrainerId(trainer)
        .setStep(1).setBaseVersion(0).setWeight(1f);
    for (float v : values) p.addValues(v);
    return p;
  }

  static Lease leaseOf(String trainer) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      LeaseTaskReply r = get(client.leaseTask(LeaseTaskRequest.newBuilder().setTrainerId(trainer).build()));
      if (r.hasLease()) return r.getLease();
      assertTrue(r.hasWait(), "waiting for the job to start, not " + r);
      Thread.sleep(50);
    }
    throw new AssertionError("no lease for " + trainer);
  }

  /** The status once every block has t1's push for {@code step}. */
  static ClusterStatus waitingFor(long step) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      ClusterStatus s = get(client.getStatus(StatusRequest.newBuilder().setIncludeBlocks(true).build()));
      if (s.getBlocksList().stream().allMatch(b -> b.getPendingStep() == step) || System.nanoTime() > deadline) return s;
      Thread.sleep(50);
    }
  }

  @Test
  void submittedJobHasTheModelsBlocks() {
    assertEquals("grpc-job", job.getJobId());
    assertEquals("sync", job.getMode());
    assertEquals(2, job.getTrainers());
    // 3x4 weights in blocks of 8 and 4, 4 biases, 4x2 weights, 2 biases: 26 floats in 5 blocks.
    assertEquals(List.of(8, 4, 4, 8, 2), job.getBlocksList().stream().map(Block::getLength).toList());
    assertEquals(26, job.getBlocksList().stream().mapToInt(Block::getLength).sum());
    // What a trainer outside the JVM builds its model from: names and row-major shapes.
    assertEquals(List.of("dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias"),
        job.getParametersList().stream().map(Parameter::getName).toList());
    assertEquals(List.of(List.of(3, 4), List.of(4), List.of(4, 2), List.of(2)),
        job.getParametersList().stream().map(Parameter::getShapeList).toList());
  }

  @Test
  void oneSyncStepThroughTheApiIsInitMinusLrTimesGradient() throws Exception {
    Map<String, BlockValues> init = pull(0);
    assertEquals(5, init.size());
    for (BlockValues v : init.values()) assertEquals(0, v.getVersion());

    RegisterTrainerReply r1 = get(client.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId("t1").build()));
    RegisterTrainerReply r2 = get(client.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId("t2").build()));
    assertEquals("grpc-job", r1.getJob().getJobId());
    assertEquals(List.of("t1", "t2"), r2.getMembersList().stream().sorted().toList());
    Lease l1 = leaseOf("t1");
    Lease l2 = leaseOf("t2");
    assertTrue(l1.getTask() != l2.getTask() || l1.getEpoch() != l2.getEpoch(), "two tasks");

    // A sync push is acknowledged once its step is applied and journaled: t1's wait for t2's.
    List<CompletableFuture<PushReply>> first = new ArrayList<>();
    for (Block b : job.getBlocksList()) {
      first.add(client.pushGradient(push("t1", b, gradient(b.getLength())).setMembershipEpoch(r2.getMembershipEpoch())
          .build()).toCompletableFuture());
    }
    // The barrier inspector: every block holds step 1 and waits for t2 alone.
    ClusterStatus waiting = waitingFor(1);
    assertEquals(5, waiting.getBlocksCount());
    for (BlockState s : waiting.getBlocksList()) {
      assertTrue(s.getAnswered(), s.getBlockId());
      assertEquals(1, s.getPendingStep(), s.getBlockId());
      assertEquals(List.of("t2"), s.getWaitingForList(), s.getBlockId());
      assertEquals(0, s.getVersion());
    }
    assertEquals(List.of("t1", "t2"), waiting.getTrainersList().stream().sorted().toList());
    assertEquals(1, waiting.getMembersCount());
    assertEquals("Up", waiting.getMembers(0).getStatus());
    assertEquals(1, waiting.getPlacementCount());
    assertEquals(5, waiting.getPlacement(0).getBlockIdsCount());
    for (CompletableFuture<PushReply> f : first) assertFalse(f.isDone(), "acknowledged before the step was applied");

    for (Block b : job.getBlocksList()) {
      PushReply p = get(client.pushGradient(push("t2", b, gradient(b.getLength()))
          .setMembershipEpoch(r2.getMembershipEpoch()).build()));
      assertEquals(PushReply.Outcome.APPLIED, p.getOutcome(), b.getBlockId());
      assertEquals(1, p.getVersion());
    }
    for (CompletableFuture<PushReply> f : first) {
      PushReply p = get(f);
      assertEquals(PushReply.Outcome.ACCEPTED, p.getOutcome());
      assertEquals(1, p.getVersion());
    }
    Map<String, BlockValues> after = pull(1);
    for (Block b : job.getBlocksList()) {
      float[] before = floats(init.get(b.getBlockId()));
      float[] g = gradient(b.getLength());
      float[] expected = new float[before.length];
      // The mean of two equal gradients of weight 1 is the gradient itself; SGD: w - lr * g.
      for (int j = 0; j < expected.length; j++) expected[j] = before[j] - 0.5f * g[j];
      BlockValues v = after.get(b.getBlockId());
      assertEquals(1, v.getVersion());
      assertArrayEquals(expected, floats(v), 0f, b.getBlockId());
    }

    // Step 2: t2 has no data for it and pushes nothing (no values, weight 0); the step is t1's gradient alone.
    List<CompletableFuture<PushReply>> second = new ArrayList<>();
    for (Block b : job.getBlocksList()) {
      second.add(client.pushGradient(push("t1", b, gradient(b.getLength())).setStep(2).setBaseVersion(1)
          .setMembershipEpoch(r2.getMembershipEpoch()).build()).toCompletableFuture());
    }
    assertTrue(waitingFor(2).getBlocksList().stream().allMatch(s -> s.getWaitingForList().equals(List.of("t2"))));
    for (Block b : job.getBlocksList()) {
      PushReply idle = get(client.pushGradient(push("t2", b, new float[0]).setStep(2).setBaseVersion(1).setWeight(0f)
          .setMembershipEpoch(r2.getMembershipEpoch()).build()));
      assertEquals(PushReply.Outcome.APPLIED, idle.getOutcome(), b.getBlockId());
      assertEquals(2, idle.getVersion());
    }
    for (CompletableFuture<PushReply> f : second) assertEquals(PushReply.Outcome.ACCEPTED, get(f).getOutcome());
    Map<String, BlockValues> afterIdle = pull(2);
    for (Block b : job.getBlocksList()) {
      float[] before = floats(after.get(b.getBlockId()));
      float[] g = gradient(b.getLength());
      float[] expected = new float[before.length];
      for (int j = 0; j < expected.length; j++) expected[j] = before[j] - 0.5f * g[j];
      assertArrayEquals(expected, floats(afterIdle.get(b.getBlockId())), 0f, b.getBlockId());
    }

    get(client.reportProgress(ReportProgressRequest.newBuilder().setTrainerId("t1").setEpoch(l1.getEpoch())
        .setTask(l1.getTask()).addSteps(StepOffset.newBuilder().setStep(1).setOffset(8)).build()));
    ClusterStatus progressed = get(client.getStatus(StatusRequest.newBuilder().build()));
    assertEquals(8, progressed.getExamplesReported());
    assertEquals(0, progressed.getBlocksCount(), "blocks only on request");

    HeartbeatReply beat = get(client.heartbeat(HeartbeatRequest.newBuilder().setTrainerId("t1").build()));
    assertEquals(0, beat.getRollbacksCount(), "no rollback happened");
    get(client.leaveJob(LeaveJobRequest.newBuilder().setTrainerId("t2").build()));
    assertEquals(List.of("t1"), get(client.getStatus(StatusRequest.getDefaultInstance())).getTrainersList());
  }

  @Test
  void aGradientOfTheWrongLengthIsInvalidArgumentNamingTheBlock() throws Exception {
    Block b = job.getBlocks(0);
    Status s = failure(client.pushGradient(push("t1", b, new float[] {1f, 2f, 3f}).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
    assertEquals("gradient for block " + b.getBlockId() + " has 3 values; the block holds 8", s.getDescription());
    // No values is a step without data only with weight 0.
    Status empty = failure(client.pushGradient(push("t1", b, new float[0]).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, empty.getCode());
    assertEquals("gradient for block " + b.getBlockId() + " has 0 values; the block holds 8", empty.getDescription());
  }

  @Test
  void anUnknownJobIsFailedPrecondition() throws Exception {
    Block b = job.getBlocks(0);
    Status push = failure(client.pushGradient(push("t1", b, gradient(8)).setJobId("other-job").build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, push.getCode());
    assertEquals("unknown job 'other-job': this cluster has no such job", push.getDescription());
    Status pull = failure(client.pullParameters(PullRequest.newBuilder().setJobId("other-job").build())
        .runWith(Sink.seq(), kit.system()));
    assertEquals(Status.Code.FAILED_PRECONDITION, pull.getCode());
  }

  @Test
  void anUnknownBlockIsNotFound() throws Exception {
    Status s = failure(client.pullParameters(PullRequest.newBuilder().setJobId("grpc-job").addBlockIds("nope#0").build())
        .runWith(Sink.seq(), kit.system()));
    assertEquals(Status.Code.NOT_FOUND, s.getCode());
    assertEquals("job 'grpc-job' has no block 'nope#0'", s.getDescription());
  }

  @Test
  void aJobFileThatDoesNotParseOrAnotherSpecUnderTheRunningIdIsRefused() throws Exception {
    Status syntax = failure(client.submitJob(SubmitJobRequest.newBuilder().setJobConfig("shardtrain.train { batch = ")
        .setShape(SHAPE).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, syntax.getCode());
    assertTrue(syntax.getDescription().startsWith("job description does not parse"), syntax.getDescription());
    Status unknownKey = failure(client.submitJob(SubmitJobRequest.newBuilder()
        .setJobConfig("shardtrain.train.bacth = 3").setShape(SHAPE).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, unknownKey.getCode());
    assertTrue(unknownKey.getDescription().contains("shardtrain.train.bacth"), unknownKey.getDescription());
    // Another job under the running job's id would find that job's blocks: refused.
    Status sameId = failure(client.submitJob(SubmitJobRequest.newBuilder()
        .setJobConfig(JOB + "\nshardtrain.train.seed = 99").setShape(SHAPE).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, sameId.getCode());
    assertEquals("the cluster (placing job grpc-job) refused: job 'grpc-job' runs with another spec; change its id"
        + " to submit a different job", sameId.getDescription());
    // The running job's own id again is acknowledged.
    assertEquals("grpc-job", get(client.submitJob(SubmitJobRequest.newBuilder().setJobConfig(JOB).setShape(SHAPE)
        .build())).getJob().getJobId());
    assertFalse(get(client.getStatus(StatusRequest.getDefaultInstance())).getDone());
  }
}
