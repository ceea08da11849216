package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.StatusRuntimeException;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.grpc.Block;
import io.shardtrain.grpc.PushReply;
import io.shardtrain.grpc.PushRequest;
import io.shardtrain.samples.cli.GrpcClientCommandsTest.Run;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.TrainerNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code status} and {@code status --watch} against a node of its own (roles ps, master and trainer
 * in this JVM) while a trainer trains: each node's rates, each trainer's task and offset, and a
 * block's last error after the API refused a push.
 */
class StatusWatchCommandTest {
  private static final Pattern NODE = Pattern.compile(
      "(?m)^  (akka://\\S+)  (\\d+) examples/s  (\\d+) bytes/s  over ([\\d.]+) s$");
  private static final Pattern TRAINER = Pattern.compile(
      "(?m)^    t1 on (akka://\\S+): (?:epoch (\\d+) task (\\d+) at offset (\\d+) of (\\d+)|no task), last step (\\d+)$");

  @TempDir static Path dir;
  static ClusterNode.Started node;
  static String grpc;

  @BeforeAll
  static void startNode() throws Exception {
    node = GrpcClientCommandsTest.startLoopbackNode(dir);
    grpc = "127.0.0.1:" + node.grpcPort();
  }

  @AfterAll
  static void stopNode() throws Exception {
    GrpcClientCommandsTest.stop(node);
  }

  @Test
  void aWatchShowsEachNodesRatesEachTrainersMovingTaskAndABlocksLastError() throws Exception {
    Path job = dir.resolve("job.conf");
    Files.writeString(job, "shardtrain.data-dir = \"" + dir + "\"\n"
        + "shardtrain.train { job-id = watch-job, dataset = fashion-mnist, hidden = [8], batch = 4, steps = 1000000,"
        + " trainers = 1 }\n");
    Run submit = GrpcClientCommandsTest.run("submit", "--grpc", grpc, "--job", job.toString());
    assertEquals(0, submit.exit(), submit.err());
    TrainerNode.start(node.api(), "t1", TrainSettings.fromConfig(node.system().settings().config()), System.out);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (node.api().status().toCompletableFuture().get(10, TimeUnit.SECONDS).examplesReported() == 0) {
      assertTrue(System.nanoTime() < deadline, "no progress reported");
      Thread.sleep(100);
    }

    // A push far ahead of the block's version: the block refuses it and keeps the refusal.
    Block block;
    try (ApiConnection api = ApiConnection.open(grpc, SecuritySettings.off())) {
      api.connect(Duration.ofSeconds(10));
      block = api.probe(false, Duration.ofSeconds(10), Duration.ofSeconds(10)).getJob().getBlocks(0);
      PushRequest.Builder push = PushRequest.newBuilder().setJobId("watch-job").setBlockId(block.getBlockId())
          .setTrainerId("t1").setStep(1_000_000_000L).setWeight(1f);
      float[] zeros = new float[block.getLength()];
      for (float z : zeros) push.addValues(z);
      StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
          () -> api.call("PushGradient", push.build(), PushReply.getDefaultInstance(), Duration.ofSeconds(10)));
      assertTrue(refused.getMessage().contains("is ahead of block " + block.getBlockId()), refused.getMessage());
    }

    Run once = GrpcClientCommandsTest.run("status", "--grpc", grpc);
    assertEquals(0, once.exit(), once.err());
    assertTrue(once.out().contains("bytes/s: gradients pushed to and values pulled from its blocks, 4 bytes a value;"
        + " since the node started):"), once.out());
    assertRatesPositive(once.out());
    Matcher error = Pattern.compile("(?m)^    " + Pattern.quote(block.getBlockId())
        + "  at \\d\\d:\\d\\d:\\d\\d: push of trainer t1 for step 1000000000 is ahead of block "
        + Pattern.quote(block.getBlockId()) + " at version \\d+").matcher(once.out());
    assertTrue(error.find(), once.out());

    Run watch = GrpcClientCommandsTest.run("status", "--grpc", grpc, "--watch", "1", "--watch-count", "3");
    assertEquals(0, watch.exit(), watch.err());
    List<String> prints = Arrays.stream(watch.out().split("(?m)^--- \\d\\d:\\d\\d:\\d\\d ---$"))
        .filter(p -> !p.isBlank()).toList();
    assertEquals(3, prints.size(), watch.out());
    List<long[]> withTask = new ArrayList<>();
    for (int i = 0; i < prints.size(); i++) {
      if (i > 0) {
        assertTrue(prints.get(i).contains("since the print before):"), prints.get(i));
        double seconds = assertRatesPositive(prints.get(i));
        assertTrue(seconds >= 0.9 && seconds < 5, "rates over " + seconds + " s");
      }
      assertTrue(prints.get(i).contains("is ahead of block " + block.getBlockId()), prints.get(i));
      long[] t = trainer(prints.get(i));
      if (t != null) withTask.add(t);
    }
    // Between two tasks a print may catch the trainer with none; with 128 steps an epoch, not twice.
    assertTrue(withTask.size() >= 2, watch.out());
    long[] first = withTask.get(0);
    long[] last = withTask.get(withTask.size() - 1);
    assertTrue(last[4] > first[4], "last step " + first[4] + " then " + last[4]);
    // Epoch, task and offset moved on (a new epoch's task starts again from offset 0).
    assertNotEquals(Arrays.toString(Arrays.copyOf(first, 3)), Arrays.toString(Arrays.copyOf(last, 3)));
  }

  /** The node's examples/s and bytes/s in {@code print}, both asserted above 0; returns the seconds they are over. */
  private static double assertRatesPositive(String print) {
    Matcher m = NODE.matcher(print);
    assertTrue(m.find(), print);
    assertEquals(node.system().address().toString(), m.group(1));
    assertTrue(Long.parseLong(m.group(2)) > 0, "examples/s in " + m.group());
    assertTrue(Long.parseLong(m.group(3)) > 0, "bytes/s in " + m.group());
    return Double.parseDouble(m.group(4));
  }

  /** Trainer t1's epoch, task, offset, task length and last step in {@code print}; null while it has no task. */
  private static long[] trainer(String print) {
    Matcher m = TRAINER.matcher(print);
    assertTrue(m.find(), print);
    assertEquals(node.system().address().toString(), m.group(1));
    if (m.group(2) == null) return null;
    long[] out = new long[5];
    for (int i = 0; i < out.length; i++) out[i] = Long.parseLong(m.group(i + 2));
    assertTrue(out[2] <= out[3], "offset " + out[2] + " of " + out[3]);
    return out;
  }
}
