package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.actors.sparse.SparseClient;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.SparsePullRequest;
import io.shardtrain.grpc.SparsePushReply;
import io.shardtrain.grpc.SparsePushRequest;
import io.shardtrain.grpc.SparseRows;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.samples.cluster.ClusterNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A click-through job submitted with {@code submit} (the client generates the data and sends its
 * shape and fingerprint) and its sparse table through the gRPC API (an async job on a node in this
 * JVM): the job says where its table is, pulls give the rows the table's shards hold, a push is applied by AdaGrad, and bad requests (an
 * id outside the table, gradient floats that are not dim per id, a NaN) are refused with
 * INVALID_ARGUMENT naming the problem, nothing applied.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GrpcSparseTableTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  static ClusterNode.Started node;
  static ApiConnection api;
  @TempDir static Path dir;
  static JobSpec job;

  @BeforeAll
  static void startNodeAndSubmitAClickThroughJob() throws Exception {
    node = ClusterNode.startOnLoopback(List.of("ps", "master"), Map.of("shardtrain.transport.bulk.enabled", false));
    // Through the command line: it generates the data, sends its shape and fingerprint, the node plans.
    Path jobFile = dir.resolve("ctr-job.conf");
    Files.writeString(jobFile, """
        shardtrain.train { job-id = grpc-sparse, dataset = ctr, mode = async, trainers = 1, optimizer = adagrad,
          lr = 0.05, lr-schedule = constant, batch = 32, epochs = 1, steps = 0, seed = 4 }
        shardtrain.train.ctr { examples = 500, test-examples = 100, fields = 4, vocabulary = 50, hash-space = 4096,
          dense-dim = 3, table-shards = 2 }
        """);
    String grpc = "127.0.0.1:" + node.grpcPort();
    GrpcClientCommandsTest.Run submit = GrpcClientCommandsTest.run("submit", "--grpc", grpc, "--job",
        jobFile.toString());
    assertEquals(0, submit.exit(), submit.err());
    assertTrue(submit.out().contains("job grpc-sparse submitted: async mode, 1 trainer, 1 parameter block"),
        submit.out());
    job = node.api().status().toCompletableFuture().get().job();
    api = ApiConnection.open(grpc, SecuritySettings.off());
    api.connect(Duration.ofSeconds(10));
  }

  @AfterAll
  static void stop() throws Exception {
    if (api != null) api.close();
    if (node != null) {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  private static SparseRows pull(long... ids) {
    SparsePullRequest.Builder b = SparsePullRequest.newBuilder().setJobId("grpc-sparse");
    for (long id : ids) b.addIds(id);
    return api.call("SparsePull", b.build(), SparseRows.getDefaultInstance(), DEADLINE);
  }

  private static SparsePushReply push(long step, long[] ids, float[] grads) {
    SparsePushRequest.Builder b = SparsePushRequest.newBuilder().setJobId("grpc-sparse").setTrainerId("py-1")
        .setStep(step).setWeight(1f);
    for (long id : ids) b.addIds(id);
    for (float g : grads) b.addGrads(g);
    return api.call("SparsePush", b.build(), SparsePushReply.getDefaultInstance(), DEADLINE);
  }

  private static float[] values(SparseRows r) {
    float[] v = new float[r.getValuesCount()];
    for (int i = 0; i < v.length; i++) v[i] = r.getValues(i);
    return v;
  }

  @Test
  @Order(1)
  void theJobSaysWhereItsTableIsAndPullsGiveTheShardsRows() throws Exception {
    ClusterStatus s = api.call("GetStatus", StatusRequest.getDefaultInstance(), ClusterStatus.getDefaultInstance(),
        DEADLINE);
    assertEquals(job.table().name(), s.getJob().getTable().getName());
    assertEquals(2, s.getJob().getTable().getShards());
    assertEquals("fm.dense", s.getJob().getParameters(0).getName());
    int dim = job.table().dim();
    SparseRows rows = pull(7, 1000, 7);
    assertEquals(dim, rows.getDim());
    assertEquals(3 * dim, rows.getValuesCount());
    float[] v = values(rows);
    assertArrayEquals(Arrays.copyOfRange(v, 0, dim), Arrays.copyOfRange(v, 2 * dim, 3 * dim), "id 7 twice");
    float[] direct = new SparseClient(node.system(), job.table(), "check", DEADLINE)
        .pull(new long[] {7, 1000, 7}, 0).toCompletableFuture().get().rows();
    assertArrayEquals(direct, v, "what the shards hold");
  }

  @Test
  @Order(2)
  void aPushIsAppliedToItsRowsOnlyAndBadPushesAreRefusedNamingTheProblem() {
    int dim = job.table().dim();
    float[] before = values(pull(11, 12));
    float[] ones = new float[dim];
    Arrays.fill(ones, 1f);
    SparsePushReply reply = push(1, new long[] {11}, ones);
    assertEquals(PushReply.Outcome.APPLIED, reply.getOutcome());
    float[] after = values(pull(11, 12));
    for (int j = 0; j < dim; j++) {
      assertTrue(after[j] < before[j], "AdaGrad moved row 11 against the gradient at " + j);
      assertEquals(before[dim + j], after[dim + j], "row 12 untouched");
    }
    StatusRuntimeException outside = assertThrows(StatusRuntimeException.class,
        () -> push(2, new long[] {1L << 40}, ones));
    assertEquals(Status.Code.INVALID_ARGUMENT, outside.getStatus().getCode());
    assertTrue(outside.getStatus().getDescription().contains("outside table"), outside.getStatus().getDescription());
    StatusRuntimeException shape = assertThrows(StatusRuntimeException.class,
        () -> push(3, new long[] {11, 12}, ones));
    assertEquals(Status.Code.INVALID_ARGUMENT, shape.getStatus().getCode());
    assertTrue(shape.getStatus().getDescription().contains("need " + 2 * dim + " gradient floats"),
        shape.getStatus().getDescription());
    float[] nan = ones.clone();
    nan[1] = Float.NaN;
    StatusRuntimeException nonFinite = assertThrows(StatusRuntimeException.class, () -> push(4, new long[] {12}, nan));
    assertEquals(Status.Code.INVALID_ARGUMENT, nonFinite.getStatus().getCode());
    assertArrayEquals(Arrays.copyOfRange(after, dim, 2 * dim), Arrays.copyOfRange(values(pull(12)), 0, dim),
        "nothing of the refused pushes applied");
  }

  /** Last: it cancels the job. */
  @Test
  @Order(3)
  void saveModelWritesTheTablesRowsOnceTheJobNoLongerTrains() throws Exception {
    int dim = job.table().dim();
    float[] ones = new float[dim];
    Arrays.fill(ones, 0.5f);
    assertEquals(PushReply.Outcome.APPLIED, push(10, new long[] {21, 3000}, Arrays.copyOf(ones, 2 * dim)).getOutcome());
    String grpc = "127.0.0.1:" + node.grpcPort();
    Path out = dir.resolve("saved-fm");
    GrpcClientCommandsTest.Run running = GrpcClientCommandsTest.run("save-model", "--grpc", grpc, "--job", "grpc-sparse",
        "--out", out.toString());
    assertEquals(2, running.exit(), running.err());
    assertTrue(running.err().contains("it still trains; a click-through job's table is saved once the job is done or"
        + " cancelled"), running.err());
    assertEquals(0, GrpcClientCommandsTest.run("cancel-job", "--grpc", grpc, "grpc-sparse").exit());
    GrpcClientCommandsTest.Run saved = GrpcClientCommandsTest.run("save-model", "--grpc", grpc, "--job", "grpc-sparse",
        "--out", out.toString(), "--npy", dir.resolve("saved-npy").toString());
    assertEquals(0, saved.exit(), saved.err());
    var model = io.shardtrain.persistence.model.ModelFiles.load(out);
    assertEquals("fm", model.description().get("model"));
    assertEquals(job.ctr().machine().denseSize(), model.parameter("fm.dense").size());
    var rows = model.table("fm.rows");
    assertEquals(dim, rows.dim());
    float[] pulled = values(pull(11, 21, 3000));
    // Every row a push created, on either shard, in id order; 11 from the push test before.
    assertArrayEquals(new long[] {11, 21, 3000}, rows.ids());
    for (int k = 0; k < 3; k++) {
      long id = new long[] {11, 21, 3000}[k];
      int r = rows.find(id);
      assertArrayEquals(Arrays.copyOfRange(pulled, k * dim, (k + 1) * dim),
          Arrays.copyOfRange(rows.values(), r * dim, (r + 1) * dim), "row " + id);
    }
    assertTrue(Files.exists(dir.resolve("saved-npy/fm.rows.ids.npy")));
  }
}
