package io.shardtrain.samples.cli;

import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.bench.PsBandwidthBenchmark;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.BlockValues;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.SubmitJobReply;
import io.shardtrain.grpc.SubmitJobRequest;
import io.shardtrain.samples.cluster.ClusterNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Push + pull bandwidth of one parameter through a node's gRPC API (a unary push and a pull per
 * block, all blocks at once, one client thread per block, as a trainer in another language moves
 * a parameter), next to the same parameter through the parameter blocks' bulk channel between two
 * ActorSystems ({@link PsBandwidthBenchmark}) in the same run. GB/s: bytes pushed plus pulled over
 * the median round, after warm-up rounds. The node runs in this JVM on loopback (memory journal).
 */
final class GrpcBandwidth {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  static final int INPUT = 64;

  /** What a run measured: the gRPC path and, from the same run, the bulk channel's figures. */
  record Result(int floats, int blockFloats, int blocks, int warmup, int rounds, double grpcGBps,
      PsBandwidthBenchmark.Result bulk) {
    String summary() {
      return String.format(Locale.ROOT, "push+pull of %d floats in %d block(s) of %d, median of %d rounds after %d"
              + " warm-up rounds: gRPC API %.3f GB/s; parameter blocks over the bulk channel %.3f GB/s (gRPC %.2f x bulk),"
              + " over Artery %.3f GB/s, raw socket %.3f GB/s", floats, blocks, blockFloats, rounds, warmup, grpcGBps,
          bulk.bulkGBps(), grpcGBps / bulk.bulkGBps(), bulk.inlineGBps(), bulk.rawGBps());
    }
  }

  private GrpcBandwidth() {}

  /**
   * Measures a parameter of {@code floats} floats (a multiple of {@link #INPUT}: the first weight of
   * an MLP 64-(floats/64)-10) in blocks of {@code blockFloats}; the command checks the counts.
   */
  static Result run(int floats, int blockFloats, int rounds, int warmup) throws Exception {
    double grpc = grpcGBps(floats, blockFloats, rounds, warmup);
    PsBandwidthBenchmark.Result bulk = PsBandwidthBenchmark.run(floats, blockFloats, rounds, warmup);
    return new Result(floats, blockFloats, (floats + blockFloats - 1) / blockFloats, warmup, rounds, grpc, bulk);
  }

  private static double grpcGBps(int floats, int blockFloats, int rounds, int warmup) throws Exception {
    ClusterNode.Started node = ClusterNode.startOnLoopback(List.of("ps", "master"), Map.of(
        "shardtrain.transport.bulk.enabled", false,
        // The blocks drop the events behind a snapshot, so the memory journal holds a few gradients.
        "shardtrain.ps.snapshot-every", 10));
    ExecutorService pool = null;
    try (ApiConnection api = ApiConnection.open("127.0.0.1:" + node.grpcPort(), SecuritySettings.off())) {
      api.connect(Duration.ofSeconds(10));
      String jobId = "grpc-bandwidth-" + System.currentTimeMillis();
      SubmitJobReply submitted = api.await("SubmitJob", SubmitJobRequest.newBuilder()
          .setJobConfig("shardtrain.train { job-id = " + jobId + ", mode = async, hidden = [" + floats / INPUT + "], "
              + "optimizer = sgd, lr = 0.000001, lr-schedule = constant, trainers = 1 }\n"
              + "shardtrain.ps.block-size = " + blockFloats + "\n")
          .setShape(DatasetShape.newBuilder().setInputDim(INPUT).setTrainExamples(1000).setClasses(10))
          .build(), SubmitJobReply.getDefaultInstance(), DEADLINE, "submit");
      String first = submitted.getJob().getBlocks(0).getParameter();
      List<PushRequest> pushes = new ArrayList<>();
      for (Block b : submitted.getJob().getBlocksList()) {
        if (!b.getParameter().equals(first)) continue;
        PushRequest.Builder p = PushRequest.newBuilder().setJobId(jobId).setBlockId(b.getBlockId())
            .setTrainerId("bandwidth").setWeight(1f);
        for (int i = 0; i < b.getLength(); i++) p.addValues((float) Math.sin(i * 0.001) * 1e-3f);
        pushes.add(p.build());
      }
      pool = Executors.newFixedThreadPool(pushes.size());
      long[] nanos = new long[rounds];
      long step = 0;
      for (int r = -warmup; r < rounds; r++) {
        long s = ++step;
        long t0 = System.nanoTime();
        List<Future<Integer>> done = new ArrayList<>();
        for (PushRequest p : pushes) done.add(pool.submit(() -> pushAndPull(api, p.toBuilder().setStep(s).build())));
        int pulled = 0;
        for (Future<Integer> f : done) pulled += f.get();
        if (pulled != floats) throw new IllegalStateException("pulled " + pulled + " floats, not " + floats);
        if (r >= 0) nanos[r] = System.nanoTime() - t0;
      }
      Arrays.sort(nanos);
      return 2.0 * 4 * floats / nanos[rounds / 2];
    } finally {
      if (pool != null) pool.shutdownNow();
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  /** Pushes {@code p} and pulls its block back at the version it made; the floats pulled. */
  private static int pushAndPull(ApiConnection api, PushRequest p) {
    PushReply reply = api.call("PushGradient", p, PushReply.getDefaultInstance(), DEADLINE);
    BlockValues v = api.call("PullParameters", PullRequest.newBuilder().setJobId(p.getJobId())
        .addBlockIds(p.getBlockId()).setMinVersion(reply.getVersion()).build(), BlockValues.getDefaultInstance(),
        DEADLINE);
    return v.getValuesCount();
  }
}
