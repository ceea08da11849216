package io.shardtrain.actors.grpc;

import static io.shardtrain.actors.grpc.GrpcApiTest.JOB;
import static io.shardtrain.actors.grpc.GrpcApiTest.SHAPE;
import static io.shardtrain.actors.grpc.GrpcApiTest.failure;
import static io.shardtrain.actors.grpc.GrpcApiTest.get;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Status;
import io.shardtrain.grpc.CheckpointRequest;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.JobEntry;
import io.shardtrain.grpc.LeaseTaskReply;
import io.shardtrain.grpc.LeaseTaskRequest;
import io.shardtrain.grpc.RegisterTrainerRequest;
import io.shardtrain.grpc.SaveModelReply;
import io.shardtrain.grpc.SaveModelRequest;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobRequest;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two jobs on one node's API: a trainer joins the job it names, a status shows the job asked for. */
class GrpcSeveralJobsTest {
  static GrpcApiTest.Node node;

  @BeforeAll
  static void startNodeWithTwoJobs() throws Exception {
    node = GrpcApiTest.startNode("GrpcSeveralJobsTest");
    get(node.client().submitJob(SubmitJobRequest.newBuilder().setJobConfig(JOB.replace("grpc-job", "older"))
        .setShape(SHAPE).build()));
    get(node.client().submitJob(SubmitJobRequest.newBuilder().setJobConfig(JOB.replace("grpc-job", "newer"))
        .setShape(SHAPE).build()));
  }

  @AfterAll
  static void stop() throws Exception {
    node.client().close().toCompletableFuture().get();
    node.kit().shutdownTestKit();
  }

  @Test
  void aTrainerJoinsTheJobItNamesAndOneThatNamesNoneJoinsTheNewestRunningJob() throws Exception {
    var client = node.client();
    assertEquals("older", get(client.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId("t-old")
        .setJobId("older").build())).getJob().getJobId());
    assertEquals("newer", get(client.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId("t-any")
        .build())).getJob().getJobId());
    // Each job knows only its own trainer.
    assertEquals(List.of("t-old"), get(client.getStatus(StatusRequest.newBuilder().setJobId("older").build()))
        .getTrainersList());
    ClusterStatus newest = get(client.getStatus(StatusRequest.getDefaultInstance()));
    assertEquals("newer", newest.getJob().getJobId());
    assertEquals(List.of("t-any"), newest.getTrainersList());
    assertEquals(List.of(JobEntry.newBuilder().setJobId("older").setRunning(true).build(),
        JobEntry.newBuilder().setJobId("newer").setRunning(true).build()), newest.getJobsList());
    // "t-old" is not a trainer of the newest job: that job does not lease it a task.
    assertEquals(LeaseTaskReply.ReplyCase.NOT_REGISTERED, get(client.leaseTask(LeaseTaskRequest.newBuilder()
        .setTrainerId("t-old").build())).getReplyCase());
    Status unknown = failure(client.getStatus(StatusRequest.newBuilder().setJobId("nope").build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, unknown.getCode());
    assertEquals("unknown job 'nope': this cluster has no such job", unknown.getDescription());
  }

  @Test
  void aModelIsSavedAndACheckpointAskedForOfTheJobNamedElseOfTheNewestRunningJob(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    var client = node.client();
    SaveModelReply older = get(client.saveModel(SaveModelRequest.newBuilder().setDir(dir.resolve("older").toString())
        .setJobId("older").build()));
    assertEquals("older", older.getJobId());
    assertEquals(0, older.getVersion());
    assertEquals("older", io.shardtrain.persistence.model.ModelFiles.load(dir.resolve("older")).description().get("job"));
    assertEquals("newer", get(client.saveModel(SaveModelRequest.newBuilder()
        .setDir(dir.resolve("newest").toString()).build())).getJobId());
    Status unknown = failure(client.saveModel(SaveModelRequest.newBuilder().setDir(dir.resolve("nope").toString())
        .setJobId("nope").build()));
    assertEquals("unknown job 'nope': this cluster has no such job", unknown.getDescription());
    unknown = failure(client.checkpoint(CheckpointRequest.newBuilder().setJobId("nope").build()));
    assertEquals("unknown job 'nope': this cluster has no such job", unknown.getDescription());
  }
}
