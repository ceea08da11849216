package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.grpc.BlockState;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.NodeTraffic;
import io.shardtrain.grpc.TrainerProgress;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** What {@code status} prints of given statuses, and the rates between two reads of a node. */
class StatusViewTest {
  private static final String NODE = "akka://shardtrain@127.0.0.1:25520";

  private static NodeTraffic read(long examples, long bytes, double seconds) {
    return NodeTraffic.newBuilder().setNode(NODE).setAnswered(true).setExamples(examples).setBytes(bytes)
        .setUptimeNanos((long) (seconds * 1e9)).build();
  }

  private static ClusterStatus status(NodeTraffic traffic, TrainerProgress trainer, BlockState block) {
    return ClusterStatus.newBuilder().setSubmitted(true).setStarted(true).setJob(Job.newBuilder().setJobId("j").setMode("sync")
        .setEpochs(1)).addTraffic(traffic).addTrainerProgress(trainer).addBlocks(block).build();
  }

  @Test
  void aNodesRatesAreOverItsOwnClockBetweenTwoReadsOrSinceItStarted() {
    assertEquals(new StatusView.Rates(100, 4000, 10), StatusView.rates(null, read(1000, 40_000, 10)));
    assertEquals(new StatusView.Rates(250, 1000, 2), StatusView.rates(read(1000, 40_000, 10), read(1500, 42_000, 12)));
    // A node that restarted counts from its start again.
    assertEquals(new StatusView.Rates(50, 100, 2), StatusView.rates(read(1000, 40_000, 10), read(100, 200, 2)));
  }

  @Test
  void aSecondPrintShowsRatesSinceTheFirstEachTrainersTaskAndABlocksLastError() {
    StringWriter text = new StringWriter();
    StatusView view = new StatusView(new PrintWriter(text, true));
    TrainerProgress t1 = TrainerProgress.newBuilder().setTrainerId("t1").setNode(NODE).setEpoch(0).setTask(1)
        .setOffset(64).setTaskLength(256).setLastStep(2).build();
    BlockState ok = BlockState.newBuilder().setBlockId("w#0").setAnswered(true).build();
    view.print(status(read(1000, 40_000, 10), t1, ok), 0);
    assertTrue(text.toString().contains("since the node started):\n  " + NODE
        + "  100 examples/s  4000 bytes/s  over 10.0 s\n"), text.toString());
    assertTrue(text.toString().contains("    t1 on " + NODE + ": epoch 0 task 1 at offset 64 of 256, last step 2\n"),
        text.toString());
    assertTrue(!text.toString().contains("last error"), text.toString());

    text.getBuffer().setLength(0);
    TrainerProgress idle = TrainerProgress.newBuilder().setTrainerId("t1").setNode(NODE).setEpoch(-1).setTask(-1)
        .setLastStep(9).build();
    BlockState failed = BlockState.newBuilder().setBlockId("w#0").setAnswered(true)
        .setLastError("gradient of length 3 from trainer t1 does not match block w#0 of length 5")
        .setLastErrorAtMillis(1_700_000_000_000L).build();
    view.print(status(read(1500, 42_000, 12), idle, failed), 2_000_000_000L);
    assertTrue(text.toString().contains("since the print before):\n  " + NODE
        + "  250 examples/s  1000 bytes/s  over 2.0 s\n"), text.toString());
    assertTrue(text.toString().contains("    t1 on " + NODE + ": no task, last step 9\n"), text.toString());
    assertTrue(text.toString().matches("(?s).*  last error of each block that had one:\n    w#0  at \\d\\d:\\d\\d:\\d\\d:"
        + " gradient of length 3 from trainer t1 does not match block w#0 of length 5\n.*"), text.toString());
  }

  @Test
  void aJobWhosePlannedTrainersHaveNotAllRegisteredSaysItWaitsForThem() {
    StringWriter text = new StringWriter();
    ClusterStatus waiting = ClusterStatus.newBuilder().setSubmitted(true).addTrainers("t1")
        .setJob(Job.newBuilder().setJobId("j").setMode("sync").setEpochs(1).setTrainers(2)).build();
    new StatusView(new PrintWriter(text, true)).print(waiting, 0);
    assertTrue(text.toString().contains("  waiting for trainers: 1 of the 2 the job plans (shardtrain.train.trainers)"
        + " have registered\n"), text.toString());
    text.getBuffer().setLength(0);
    new StatusView(new PrintWriter(text, true)).print(waiting.toBuilder().setStarted(true).build(), 0);
    assertTrue(!text.toString().contains("waiting for trainers"), text.toString());
  }
}
