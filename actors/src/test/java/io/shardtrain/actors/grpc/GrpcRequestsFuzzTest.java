package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import akka.stream.javadsl.Sink;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.compute.fuzz.Hostile;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.ClickThroughShape;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.HeartbeatRequest;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.LeaseTaskRequest;
import io.shardtrain.grpc.LeaveJobRequest;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.RegisterTrainerRequest;
import io.shardtrain.grpc.SparsePullRequest;
import io.shardtrain.grpc.SparsePushRequest;
import io.shardtrain.grpc.ReportProgressRequest;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.StepOffset;
import io.shardtrain.grpc.SubmitJobRequest;
import io.shardtrain.grpc.TaskMark;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The gRPC API's requests on hostile bytes, against a running single-node cluster with an async
 * job: each input is a valid request's bytes mutated (or random), parsed as akka-grpc parses it
 * and handed to the service. A request that parses gets an answer or a status that names the
 * problem, never INTERNAL or UNKNOWN (an exception the service did not expect), and the service
 * never allocates much more than the request's size. Save-model and checkpoint are left out: they
 * write wherever the request says. The sparse calls meet a job without a table, so only their checks.
 */
class GrpcRequestsFuzzTest {
  static final String JOB = """
      shardtrain.train { job-id = "fuzz-job", hidden = [4], optimizer = sgd, lr = 0.1, lr-schedule = constant,
        weight-decay = 0, batch = 8, steps = 1000000, trainers = 2, mode = async }
      shardtrain.ps.block-size = 8
      """;
  static final DatasetShape SHAPE = DatasetShape.newBuilder().setInputDim(3).setTrainExamples(40).setClasses(2).build();

  private static ActorTestKit kit;
  private static ShardTrainGrpcService service;
  private static List<Call<?>> calls;

  /** One method of the API: its request's parser, a valid request, and the call. */
  record Call<R extends Message>(String method, com.google.protobuf.Parser<R> parser, R valid,
      Function<R, CompletionStage<?>> call) {
    CompletionStage<?> parseAndCall(byte[] bytes) throws InvalidProtocolBufferException {
      return call.apply(parser.parseFrom(bytes));
    }
  }

  record Input(Call<?> call, byte[] bytes) {
    @Override
    public String toString() {
      return call.method() + " " + Hostile.describe(bytes);
    }
  }

  @BeforeContainer
  static void startNodeAndSubmit() throws Exception {
    kit = ActorTestKit.create("GrpcRequestsFuzzTest", ConfigFactory.parseString("""
          akka.actor.provider = cluster
          akka.remote.artery.canonical.port = 0
          akka.remote.artery.canonical.hostname = 127.0.0.1
          akka.cluster.roles = [ps, master]
          akka.cluster.jmx.multi-mbeans-in-same-jvm = on
          akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
          akka.loglevel = ERROR
          shardtrain.grpc.ask-timeout = 2s
          shardtrain.trainer.ask-timeout = 2s
          """).withFallback(PersistenceTestKitPlugin.config()).withFallback(PersistenceTestKitSnapshotPlugin.config())
        .withFallback(ConfigFactory.load()));
    ShardTrain st = ShardTrain.start(kit.system());
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (cluster.selfMember().status() != MemberStatus.up()) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("cluster did not form");
      Thread.sleep(50);
    }
    service = new ShardTrainGrpcService(st, GrpcSettings.create(kit.system()));
    SubmitJobRequest submit = SubmitJobRequest.newBuilder().setJobConfig(JOB).setShape(SHAPE).build();
    Job job = service.submitJob(submit).toCompletableFuture().get(30, TimeUnit.SECONDS).getJob();
    Block block = job.getBlocks(0);
    PushRequest.Builder push = PushRequest.newBuilder().setJobId("fuzz-job").setBlockId(block.getBlockId())
        .setTrainerId("t1").setStep(1).setWeight(8f).setMark(TaskMark.newBuilder().setEpoch(0).setTask(1).setOffset(8));
    for (int i = 0; i < block.getLength(); i++) push.addValues(0.01f * i);
    calls = List.of(
        new Call<>("SubmitJob", SubmitJobRequest.parser(), submit, service::submitJob),
        new Call<>("GetStatus", StatusRequest.parser(), StatusRequest.newBuilder().setIncludeBlocks(true).build(),
            service::getStatus),
        new Call<>("RegisterTrainer", RegisterTrainerRequest.parser(),
            RegisterTrainerRequest.newBuilder().setTrainerId("t1").build(), GrpcRequestsFuzzTest::registerAndLeave),
        new Call<>("Heartbeat", HeartbeatRequest.parser(), HeartbeatRequest.newBuilder().setTrainerId("t1").build(),
            service::heartbeat),
        new Call<>("LeaseTask", LeaseTaskRequest.parser(), LeaseTaskRequest.newBuilder().setTrainerId("t1").build(),
            service::leaseTask),
        new Call<>("ReportProgress", ReportProgressRequest.parser(), ReportProgressRequest.newBuilder().setTrainerId("t1")
            .setEpoch(0).setTask(1).addSteps(StepOffset.newBuilder().setStep(1).setOffset(8)).build(),
            service::reportProgress),
        new Call<>("LeaveJob", LeaveJobRequest.parser(), LeaveJobRequest.newBuilder().setTrainerId("t9").build(),
            service::leaveJob),
        new Call<>("PullParameters", PullRequest.parser(), PullRequest.newBuilder().setJobId("fuzz-job")
            .addBlockIds(block.getBlockId()).build(), GrpcRequestsFuzzTest::pull),
        new Call<>("PushGradient", PushRequest.parser(), push.build(), service::pushGradient),
        // A click-through job is planned before the node finds its job taken, so its description is fuzzed too.
        new Call<>("SubmitJob", SubmitJobRequest.parser(), SubmitJobRequest.newBuilder()
            .setJobConfig("shardtrain.train { job-id = \"ctr\", mode = async, batch = 8 }\n")
            .setShape(DatasetShape.newBuilder().setInputDim(13).setTrainExamples(40).setClickThrough(
                ClickThroughShape.newBuilder().setFields(26).setHashSpace(1 << 20).setFingerprint(7))).build(),
            service::submitJob),
        new Call<>("SparsePull", SparsePullRequest.parser(), SparsePullRequest.newBuilder().setJobId("fuzz-job")
            .addIds(3).addIds(9).build(), service::sparsePull),
        new Call<>("SparsePush", SparsePushRequest.parser(), SparsePushRequest.newBuilder().setJobId("fuzz-job")
            .setTrainerId("t1").setStep(1).setWeight(8f).addIds(3).addGrads(0.5f).build(), service::sparsePush));
  }

  /** A registration, then the trainer leaves: thousands of registered trainers would slow every call after. */
  private static CompletionStage<?> registerAndLeave(RegisterTrainerRequest r) {
    return service.registerTrainer(r).thenCompose(reply ->
        service.leaveJob(LeaveJobRequest.newBuilder().setTrainerId(r.getTrainerId()).build()));
  }

  /** A pull at version 0: a pull at a version the blocks have not reached waits for it, which is no decoding. */
  private static CompletionStage<?> pull(PullRequest r) {
    return service.pullParameters(r.toBuilder().setMinVersion(0).build()).runWith(Sink.seq(), kit.system());
  }

  @AfterContainer
  static void stop() {
    kit.shutdownTestKit();
  }

  @Property
  void parsedRequestsGetAnAnswerOrAStatusNamingTheProblem(@ForAll("requests") Input in) {
    Hostile.check(in.bytes(), 8 << 20, 1024, () -> {
      CompletionStage<?> answer;
      try {
        answer = in.call().parseAndCall(in.bytes());
      } catch (InvalidProtocolBufferException e) {
        return; // akka-grpc answers INVALID_ARGUMENT before the service sees it
      }
      try {
        answer.toCompletableFuture().get(15, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        Status status = ApiError.statusOf(e.getCause());
        assertNotEquals(Status.Code.INTERNAL, status.getCode(), status.toString());
        assertNotEquals(Status.Code.UNKNOWN, status.getCode(), status.toString());
        assertFalse(status.getDescription() == null || status.getDescription().isBlank(), status.toString());
      }
    }, List.of());
  }

  @Provide
  Arbitrary<Input> requests() {
    return Arbitraries.randomValue(r -> {
      Call<?> call = calls.get(r.nextInt(calls.size()));
      return new Input(call, r.nextInt(8) == 0 ? Hostile.random(r) : Hostile.mutant(call.valid().toByteArray(), r, true));
    });
  }

  @Example
  void aTrainerIdLongerThanTheLimitIsABadRequest() throws Exception {
    var answer = service.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId("t".repeat(100_000)).build());
    ExecutionException e = assertThrows(ExecutionException.class, () -> answer.toCompletableFuture().get(10, TimeUnit.SECONDS));
    assertEquals(Status.INVALID_ARGUMENT.withDescription("trainer_id of 100000 characters, more than 256").toString(),
        ApiError.statusOf(e.getCause()).toString());
  }

  @Example
  void aJobWhoseScheduleDoesNotParseIsABadRequestNotAnInternalError() throws Exception {
    // Checked when the job description is read (TrainSettings), before anything is planned or placed.
    var answer = service.submitJob(SubmitJobRequest.newBuilder().setShape(SHAPE)
        .setJobConfig(JOB.replace("lr-schedule = constant", "lr-schedule = contant")).build());
    ExecutionException e = assertThrows(ExecutionException.class, () -> answer.toCompletableFuture().get(30, TimeUnit.SECONDS));
    Status s = ApiError.statusOf(e.getCause());
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
    assertTrue(s.getDescription().startsWith("job description: bad learning-rate schedule 'contant'"),
        s.getDescription());
  }

  @Example
  void aJobOfNoTrainersIsABadRequestNotAnInternalError() throws Exception {
    var answer = service.submitJob(SubmitJobRequest.newBuilder().setShape(SHAPE)
        .setJobConfig(JOB + "\nshardtrain.train.trainers = 0").build());
    ExecutionException e = assertThrows(ExecutionException.class, () -> answer.toCompletableFuture().get(30, TimeUnit.SECONDS));
    Status s = ApiError.statusOf(e.getCause());
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
    assertTrue(s.getDescription().endsWith("shardtrain.train.trainers must be at least 1, got 0"), s.getDescription());
  }

  @Example
  void aPushWhoseTaskMarkFailsItsCheckIsABadRequestNotAnInternalError() throws Exception {
    // TaskMark checks its offset itself, on the way to the block, after the service's own checks.
    PushRequest push = (PushRequest) calls.stream().filter(c -> c.method().equals("PushGradient")).findFirst()
        .orElseThrow().valid();
    var answer = service.pushGradient(push.toBuilder().setMark(TaskMark.newBuilder().setOffset(0)).build());
    ExecutionException e = assertThrows(ExecutionException.class, () -> answer.toCompletableFuture().get(30, TimeUnit.SECONDS));
    assertEquals(Status.INVALID_ARGUMENT.withDescription("task mark needs epoch >= 0, task >= 0 and offset >= 1, not 0/0@0")
        .toString(), ApiError.statusOf(e.getCause()).toString());
  }
}
