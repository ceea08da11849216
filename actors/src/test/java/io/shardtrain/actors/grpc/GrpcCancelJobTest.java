package io.shardtrain.actors.grpc;

import static io.shardtrain.actors.grpc.GrpcApiTest.JOB;
import static io.shardtrain.actors.grpc.GrpcApiTest.SHAPE;
import static io.shardtrain.actors.grpc.GrpcApiTest.failure;
import static io.shardtrain.actors.grpc.GrpcApiTest.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.shardtrain.grpc.CancelJobReply;
import io.shardtrain.grpc.CancelJobRequest;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.HeartbeatRequest;
import io.shardtrain.grpc.LeaseTaskReply;
import io.shardtrain.grpc.LeaseTaskRequest;
import io.shardtrain.grpc.RegisterTrainerRequest;
import io.shardtrain.grpc.ReportProgressRequest;
import io.shardtrain.grpc.StepOffset;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class GrpcCancelJobTest {
  /**
   * A job cancelled through the API: the reply names its trainers and their last steps, a gRPC
   * trainer's heartbeats and progress reports say so from then on and its lease request gets no task
   * of a done job, the status says cancelled, and a second cancel, one without an id or one of an
   * unknown job is refused naming why.
   */
  @Test
  void aCancelledJobsTrainerHearsItOnItsHeartbeatAndLeasesNoTask() throws Exception {
    GrpcApiTest.Node node = GrpcApiTest.startNode("GrpcCancelJobTest");
    try {
      var client = node.client();
      get(client.submitJob(SubmitJobRequest.newBuilder().setJobConfig(JOB.replace("grpc-job", "to-cancel"))
          .setShape(SHAPE).build()));
      for (String id : List.of("py", "py2")) {
        get(client.registerTrainer(RegisterTrainerRequest.newBuilder().setTrainerId(id).setJobId("to-cancel").build()));
      }
      LeaseTaskRequest leaseRequest = LeaseTaskRequest.newBuilder().setTrainerId("py").setJobId("to-cancel").build();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (!get(client.leaseTask(leaseRequest)).hasLease()) {
        assertTrue(System.nanoTime() < deadline, "no lease");
        Thread.sleep(20);
      }
      assertFalse(get(client.reportProgress(report(1, 8))).getJobCancelled());
      HeartbeatRequest beat = HeartbeatRequest.newBuilder().setTrainerId("py").setJobId("to-cancel").build();
      assertFalse(get(client.heartbeat(beat)).getJobCancelled());

      CancelJobReply reply = get(client.cancelJob(CancelJobRequest.newBuilder().setJobId("to-cancel").build()));
      assertEquals("to-cancel", reply.getJobId());
      assertEquals(List.of("py", "py2"), reply.getTrainersList());
      assertEquals(List.of(1L, 0L), reply.getLastStepsList());
      // The notice reaches the node's stand-in for the trainer a moment after the reply; then every
      // heartbeat and report says so.
      while (!get(client.heartbeat(beat)).getJobCancelled()) {
        assertTrue(System.nanoTime() < deadline, "no heartbeat said the job was cancelled");
        Thread.sleep(20);
      }
      assertTrue(get(client.heartbeat(beat)).getJobCancelled());
      assertTrue(get(client.reportProgress(report(2, 16))).getJobCancelled());
      LeaseTaskReply lease = get(client.leaseTask(leaseRequest));
      assertTrue(lease.hasNoTask() && lease.getNoTask().getJobDone(), String.valueOf(lease));
      ClusterStatus status = get(client.getStatus(StatusRequest.newBuilder().setJobId("to-cancel").build()));
      assertTrue(status.getDone() && status.getCancelled(), String.valueOf(status));

      Status again = failure(client.cancelJob(CancelJobRequest.newBuilder().setJobId("to-cancel").build()));
      assertEquals(Status.Code.FAILED_PRECONDITION, again.getCode());
      assertEquals("the master refused: job 'to-cancel' was cancelled already", again.getDescription());
      Status blank = failure(client.cancelJob(CancelJobRequest.getDefaultInstance()));
      assertEquals(Status.Code.INVALID_ARGUMENT, blank.getCode());
      assertEquals("cancel-job needs a job id", blank.getDescription());
      Status unknown = failure(client.cancelJob(CancelJobRequest.newBuilder().setJobId("nope").build()));
      assertEquals("the master refused: no job 'nope' in this cluster; jobs: to-cancel (running)", unknown.getDescription());
    } finally {
      node.client().close().toCompletableFuture().get();
      node.kit().shutdownTestKit();
    }
  }

  /** Trainer "py"'s report of step {@code step} at reader offset {@code offset} of task 0/0. */
  private static ReportProgressRequest report(long step, long offset) {
    return ReportProgressRequest.newBuilder().setTrainerId("py").setJobId("to-cancel").setEpoch(0).setTask(0)
        .addSteps(StepOffset.newBuilder().setStep(step).setOffset(offset)).build();
  }
}
