package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.persistence.model.Checkpoint;
import io.shardtrain.persistence.model.CheckpointFiles;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.samples.cli.ShardTrainCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Checkpoints on three node JVMs with a PostgreSQL journal. Checkpoint durability: blocks journal
 * only the checkpoints taken every 10 steps; a {@code ps} node SIGKILLed after one rolls the whole
 * job back to the last committed checkpoint (blocks, reader offsets, trainers), and since sync mode
 * replays the same batches from the restored offsets, the job ends with the parameters of the
 * same job without the kill. On demand: {@code shardtrain checkpoint} (the command line, through
 * the seed node's gRPC API) at the end writes every block at the last step with the reader offsets
 * of that step.
 */
@Tag("multi-jvm") // starts node JVMs: the failsafe lane of mvn verify, not mvn test (tests/pom.xml)
class CheckpointRollbackTest {
  @Test
  void killedPsNodeRollsTheJobBackToItsLastCheckpointAndTheCheckpointCommandWritesItsEndAsARunWithoutTheKill()
      throws Exception {
    Assumptions.assumeTrue(NodeCluster.URL != null,
        "SHARDTRAIN_TEST_POSTGRES_URL is not set (.ci/run starts PostgreSQL)");
    Path atEnd = NodeFailoverTest.DIR.resolve("ckpt-at-end").toAbsolutePath();
    StringWriter out = new StringWriter();
    NodeFailoverTest.Run killed = NodeFailoverTest.runJob("ckpt-killed", NodeFailoverTest.PS_VICTIM, """
            shardtrain.ps.durability = checkpoint
            shardtrain.checkpoint { every-steps = 10, dir = "%s" }
            """.formatted(NodeFailoverTest.DIR.resolve("ckpt-periodic").toAbsolutePath()), NodeFailoverTest.STEPS,
        (cluster, progress) -> {
          JobProtocol.JobStatus at = cluster.awaitStatus(s -> s.checkpointStep() >= 10, Duration.ofMinutes(4));
          cluster.nodes.get(2).kill();
          System.out.println("ckpt-killed: killed " + cluster.nodes.get(2).name() + " after checkpoint "
              + at.checkpointStep() + " at " + at.examplesReported() + " examples");
        },
        cluster -> {
          StringWriter err = new StringWriter();
          int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), "checkpoint",
              "--grpc", cluster.grpc(), "--config", cluster.nodeConf().toString(), "--dir", atEnd.toString());
          assertEquals(0, exit, out + "\n" + err);
        });

    assertTrue(killed.status().generation() >= 1, "the job rolled back: " + killed.status());
    System.out.printf("checkpoint durability: rolled back %d time(s); last periodic checkpoint at step %d%n",
        killed.status().generation(), killed.status().checkpointStep());
    double error = SyncEquivalenceTest.relativeDistance(NodeFailoverTest.cleanModel(), killed.model());
    System.out.printf("parameters after a rollback vs a run without the kill: relative error %.3g%n", error);
    assertTrue(error < 1e-5, "relative error " + error);

    Matcher m = Pattern.compile("checkpoint of job failover at step (\\d+) written to (.+)").matcher(out.toString());
    assertTrue(m.find(), out.toString());
    // Every sample was trained once: a job that is done is checkpointed at its end, with the offsets
    // of 40 steps, not more.
    assertEquals(NodeFailoverTest.STEPS, Long.parseLong(m.group(1)), out.toString());
    assertEquals(atEnd.toString(), m.group(2).trim());
    Checkpoint end = CheckpointFiles.load(atEnd);
    assertOffsetsOfStep(end);
    assertSameValues(killed.model(), end);
    assertEquals(end.model(), ModelFiles.load(atEnd), "a checkpoint is a loadable model");
    assertEquals(List.of(), end.slotsOf("dense1.weight").values(), "plain SGD has no optimizer slot");
    assertEquals(NodeFailoverTest.STEPS, end.slotsOf("dense1.weight").updates());
  }

  /** Two trainers, one task each, one batch of 32 per step: at step t each task is 32·t examples in. */
  private static void assertOffsetsOfStep(Checkpoint c) {
    List<Checkpoint.ReaderOffset> epoch0 = c.readerOffsets().stream().filter(o -> o.epoch() == 0).toList();
    assertEquals(2, epoch0.size(), c.readerOffsets().toString());
    for (Checkpoint.ReaderOffset o : epoch0) assertEquals(32L * c.step(), o.offset(), "offset of task " + o.task());
  }

  private static void assertSameValues(Mlp model, Checkpoint c) {
    for (Parameter p : model.parameters()) {
      float[] expected = p.value().data();
      float[] actual = c.model().parameter(p.name()).values();
      for (int i = 0; i < expected.length; i++) {
        assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]), p.name() + "[" + i + "]");
      }
    }
  }
}
