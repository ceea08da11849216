package io.shardtrain.samples.cli;

import io.grpc.StatusRuntimeException;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.BlockState;
import io.shardtrain.grpc.BlockValues;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.DatasetShape;
import io.shardtrain.grpc.PullRequest;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.grpc.StatusRequest;
import io.shardtrain.grpc.SubmitJobReply;
import io.shardtrain.grpc.SubmitJobRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Many concurrent clients against one node's gRPC API: each client pushes a gradient to a block
 * (async job: every push is applied as it arrives) and pulls that block back, over and over for a
 * fixed time. Latencies go into HdrHistograms (microseconds). At the end it checks conservation:
 * the blocks' versions (one per applied push) add up to the pushes acknowledged as applied.
 */
final class LoadBenchmark {
  /** What a run measured. */
  record Result(int clients, double seconds, long pushes, long pulls, long failures, String firstFailure,
      Histogram push, Histogram pull, long appliedAcknowledged, long blockVersions, int blocks, int floatsPerBlock) {
    boolean conserved() {
      return appliedAcknowledged == blockVersions;
    }

    Map<String, Object> toJson() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("benchmark", "load");
      m.put("clients", clients);
      m.put("seconds", seconds);
      m.put("blocks", blocks);
      m.put("floats_per_block", floatsPerBlock);
      m.put("pushes", pushes);
      m.put("pulls", pulls);
      m.put("failed_calls", failures);
      if (firstFailure != null) m.put("first_failure", firstFailure);
      m.put("pushes_per_sec", pushes / seconds);
      m.put("pulls_per_sec", pulls / seconds);
      m.put("push_us", percentiles(push));
      m.put("pull_us", percentiles(pull));
      m.put("applied_acknowledged", appliedAcknowledged);
      m.put("block_versions", blockVersions);
      m.put("conserved", conserved());
      return m;
    }

    private static Map<String, Object> percentiles(Histogram h) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("p50", h.getValueAtPercentile(50));
      m.put("p99", h.getValueAtPercentile(99));
      m.put("p999", h.getValueAtPercentile(99.9));
      m.put("max", h.getMaxValue());
      return m;
    }
  }

  static final int MAX_CLIENTS = 1024;
  static final Duration MAX_DURATION = Duration.ofMinutes(30);
  private static final Duration CALL_DEADLINE = Duration.ofSeconds(30);

  private LoadBenchmark() {}

  /**
   * Submits an async job of {@code blockFloats}-float blocks (an MLP 64-{@code hidden}-10) to the
   * node at {@code grpc}, then runs {@code clients} clients for {@code duration}.
   */
  static Result run(String grpc, int clients, Duration duration, int hidden, int blockFloats) throws Exception {
    return run(grpc, clients, duration, hidden, blockFloats, SecuritySettings.off());
  }

  /** As above, over TLS with the cluster's token when {@code security} is on. */
  static Result run(String grpc, int clients, Duration duration, int hidden, int blockFloats,
      SecuritySettings security) throws Exception {
    if (clients < 1 || clients > MAX_CLIENTS) {
      throw new IllegalArgumentException("--clients must be between 1 and " + MAX_CLIENTS + ", not " + clients);
    }
    if (duration.isNegative() || duration.isZero() || duration.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException("--seconds must be between 1 and " + MAX_DURATION.toSeconds() + ", not "
          + duration.toSeconds());
    }
    try (ApiConnection api = ApiConnection.open(grpc, security)) {
      api.connect(Duration.ofSeconds(4));
      String jobId = "load-" + System.currentTimeMillis();
      SubmitJobReply submitted = api.await("SubmitJob", SubmitJobRequest.newBuilder()
          .setJobConfig("shardtrain.train { job-id = " + jobId + ", mode = async, hidden = [" + hidden + "], "
              + "optimizer = sgd, lr = 0.001, lr-schedule = constant, trainers = " + clients + " }\n"
              + "shardtrain.ps.block-size = " + blockFloats + "\n")
          .setShape(DatasetShape.newBuilder().setInputDim(64).setTrainExamples(1_000_000).setClasses(10))
          .build(), SubmitJobReply.getDefaultInstance(), CALL_DEADLINE, "submit");
      List<Block> blocks = submitted.getJob().getBlocksList();
      // Every block answers a pull before the clock starts (they are placed and initialised).
      for (Block b : blocks) pull(api, jobId, b.getBlockId());

      long end = System.nanoTime() + duration.toNanos();
      Histogram push = new Histogram(3_600_000_000L, 3);
      Histogram pull = new Histogram(3_600_000_000L, 3);
      AtomicLong applied = new AtomicLong();
      AtomicLong failures = new AtomicLong();
      java.util.concurrent.atomic.AtomicReference<String> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
      List<Thread> threads = new ArrayList<>();
      List<Histogram[]> perClient = new ArrayList<>();
      long started = System.nanoTime();
      for (int c = 0; c < clients; c++) {
        Histogram[] h = {new Histogram(3_600_000_000L, 3), new Histogram(3_600_000_000L, 3)};
        perClient.add(h);
        String trainer = "load-client-" + c;
        SplittableRandom random = new SplittableRandom(c);
        Thread t = new Thread(() -> client(api, jobId, trainer, blocks, random, end, h, applied, failures,
            firstFailure), "load-" + c);
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) t.join();
      double seconds = (System.nanoTime() - started) / 1e9;
      for (Histogram[] h : perClient) {
        push.add(h[0]);
        pull.add(h[1]);
      }
      ClusterStatus status = api.await("GetStatus", StatusRequest.newBuilder().setIncludeBlocks(true).build(),
          ClusterStatus.getDefaultInstance(), CALL_DEADLINE, "status");
      long versions = 0;
      for (BlockState b : status.getBlocksList()) {
        if (!b.getAnswered()) throw new IllegalStateException("block " + b.getBlockId() + " did not say its version");
        versions += b.getVersion();
      }
      return new Result(clients, seconds, push.getTotalCount(), pull.getTotalCount(), failures.get(), firstFailure.get(),
          push, pull,
          applied.get(), versions, blocks.size(), blocks.isEmpty() ? 0 : blocks.get(0).getLength());
    }
  }

  private static void client(ApiConnection api, String jobId, String trainer, List<Block> blocks,
      SplittableRandom random, long end, Histogram[] h, AtomicLong applied, AtomicLong failures,
      java.util.concurrent.atomic.AtomicReference<String> firstFailure) {
    long step = 0;
    // The version this client last saw of each block: its pushes' base versions.
    long[] versions = new long[blocks.size()];
    while (System.nanoTime() < end) {
      int k = random.nextInt(blocks.size());
      Block b = blocks.get(k);
      PushRequest.Builder request = PushRequest.newBuilder().setJobId(jobId).setBlockId(b.getBlockId())
          .setTrainerId(trainer).setStep(++step).setBaseVersion(versions[k]).setWeight(1f);
      for (int i = 0; i < b.getLength(); i++) request.addValues((float) (random.nextDouble() - 0.5) * 1e-3f);
      try {
        long t0 = System.nanoTime();
        PushReply reply = api.call("PushGradient", request.build(), PushReply.getDefaultInstance(), CALL_DEADLINE);
        long t1 = System.nanoTime();
        h[0].recordValue((t1 - t0) / 1000);
        if (reply.getOutcome() == PushReply.Outcome.APPLIED) applied.incrementAndGet();
        versions[k] = pull(api, jobId, b.getBlockId()).getVersion();
        h[1].recordValue((System.nanoTime() - t1) / 1000);
      } catch (StatusRuntimeException e) {
        failures.incrementAndGet();
        firstFailure.compareAndSet(null, e.getStatus().getCode() + ": " + e.getStatus().getDescription());
      }
    }
  }

  private static BlockValues pull(ApiConnection api, String jobId, String block) {
    return api.call("PullParameters", PullRequest.newBuilder().setJobId(jobId).addBlockIds(block).setMinVersion(0)
        .build(), BlockValues.getDefaultInstance(), CALL_DEADLINE);
  }
}
