package io.shardtrain.tests;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invariant 2 of docs/ARCHITECTURE.md on the real embedded journals (the log and H2): a block whose
 * ActorSystem stops after k updates comes back, in a new ActorSystem on the same files, bit for bit as it was, having
 * replayed at most {@code snapshot-every} events; and it goes on exactly as the original would
 * (so the optimizer's slots came back too).
 */
class BlockRecoveryTest {
  @TempDir Path dir;

  static final Duration T = Duration.ofSeconds(20);
  static final int LENGTH = 1000;

  /** A one-node cluster on the {@code kind} journal (h2 or log) kept under {@code dir}. */
  ActorSystem<Void> node(String kind) {
    Config base = ConfigFactory.parseMap(Map.of(
            "shardtrain.persistence.journal", kind,
            "shardtrain.persistence.h2-path", dir.resolve("journal/shardtrain").toString(),
            "shardtrain.persistence.log-dir", dir.resolve("journal/log").toString(),
            "shardtrain.ps.snapshot-every", 5,
            "akka.cluster.roles", List.of("ps"),
            "akka.remote.artery.canonical.port", 0))
        .withFallback(ConfigFactory.parseResources("cluster.conf"))
        .withFallback(ConfigFactory.load());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "recovery", JournalConfig.of(base));
    Cluster.get(system).manager().tell(Join.create(Cluster.get(system).selfMember().address()));
    Journal.start(system);
    ParameterBlock.init(system);
    return system;
  }

  @ParameterizedTest
  @ValueSource(strings = {"log", "h2"})
  void blockStoppedAfterKUpdatesRecoversBitForBitReplayingAtMostSnapshotEveryEvents(String kind) throws Exception {
    BlockSpec spec = new BlockSpec("w", 0, 0, LENGTH, OptimizerSpec.parse("nesterov"), "step:3:0.5", 0.1f,
        BlockSpec.Mode.ASYNC, -1);
    Random rnd = new Random(11);
    float[] init = new float[LENGTH];
    for (int i = 0; i < LENGTH; i++) init[i] = (float) rnd.nextGaussian();

    // What the block must hold: the same updates through the same optimizer, in this process.
    Optimizer optimizer = spec.optimizer().create();
    LearningRateSchedule schedule = spec.schedule();
    OptimizerState expectedState = OptimizerState.create(optimizer, LENGTH);
    float[] expected = init.clone();

    int k = 13;
    float[][] grads = new float[k + 1][LENGTH];
    for (float[] g : grads) for (int i = 0; i < LENGTH; i++) g[i] = (float) rnd.nextGaussian();

    ActorSystem<Void> first = node(kind);
    try {
      var block = ParameterBlock.entityRef(first, spec.entityId());
      block.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, init, r), T).toCompletableFuture().get();
      for (int s = 1; s <= k; s++) {
        float[] g = grads[s - 1];
        long base = s - 1;
        int step = s;
        block.<BlockProtocol.PushAck>askWithStatus(
            r -> new BlockProtocol.PushGradient("t1", step, base, 0, 1f, g, r), T).toCompletableFuture().get();
        expectedState.step(optimizer, schedule, expected, g);
      }
      BlockProtocol.BlockValues before = block.<BlockProtocol.BlockValues>askWithStatus(
          r -> new BlockProtocol.Pull(k, r), T).toCompletableFuture().get();
      assertEquals(k, before.version());
      assertBitsEqual(expected, before.values());
    } finally {
      first.terminate();
      first.getWhenTerminated().toCompletableFuture().get();
    }

    ActorSystem<Void> second = node(kind);
    try {
      var block = ParameterBlock.entityRef(second, spec.entityId());
      BlockProtocol.BlockValues after = block.<BlockProtocol.BlockValues>askWithStatus(
          r -> new BlockProtocol.Pull(0, r), T).toCompletableFuture().get();
      assertEquals(k, after.version());
      assertBitsEqual(expected, after.values());
      BlockProtocol.BlockStats stats = block.<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, T)
          .toCompletableFuture().get();
      assertTrue(stats.eventsReplayed() <= 5, "replayed " + stats.eventsReplayed() + " events");

      // One more update after recovery matches the original optimizer run: slots came back too.
      float[] g = grads[k];
      block.<BlockProtocol.PushAck>askWithStatus(
          r -> new BlockProtocol.PushGradient("t1", k + 1, k, 0, 1f, g, r), T).toCompletableFuture().get();
      expectedState.step(optimizer, schedule, expected, g);
      BlockProtocol.BlockValues next = block.<BlockProtocol.BlockValues>askWithStatus(
          r -> new BlockProtocol.Pull(k + 1, r), T).toCompletableFuture().get();
      assertBitsEqual(expected, next.values());
    } finally {
      second.terminate();
      second.getWhenTerminated().toCompletableFuture().get();
    }
  }

  /**
   * Two copies of one block at once, as a partition could start them while the side that lost
   * still runs its copy (cluster.conf's short down-removal-margin): each on its own one-node
   * cluster, both on one journal. The journal's key (persistence id, sequence number) refuses the
   * second write of a sequence number, so the copy that wrote it is not acknowledged and recovers
   * what the other wrote; asked again, it applies its push on top. The history never forks: a
   * third copy finds every acknowledged push applied once, in the order acknowledged.
   */
  @ParameterizedTest
  @ValueSource(strings = {"log", "h2"})
  void aSecondCopyOfABlockCannotForkItsJournalAndItsRefusedPushIsAppliedWhenSentAgain(String kind) throws Exception {
    int length = 8;
    BlockSpec spec = new BlockSpec("w", 0, 0, length, OptimizerSpec.parse("sgd"), "constant", 0.5f,
        BlockSpec.Mode.ASYNC, -1);
    float[] init = new float[length];
    float[][] g = new float[3][length];
    for (int i = 0; i < length; i++) {
      init[i] = i;
      g[0][i] = 1;
      g[1][i] = 2 * i;
      g[2][i] = -4;
    }
    ActorSystem<Void> a = node(kind);
    ActorSystem<Void> b = node(kind);
    try {
      var onA = ParameterBlock.entityRef(a, spec.entityId());
      var onB = ParameterBlock.entityRef(b, spec.entityId());
      onA.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, init, r), T).toCompletableFuture().get();
      assertEquals(1, push(onA, "t1", 1, 0, g[0], T).version());
      // B's copy starts now and recovers version 1.
      assertEquals(1, onB.<BlockProtocol.BlockValues>askWithStatus(r -> new BlockProtocol.Pull(1, r), T)
          .toCompletableFuture().get().version());
      assertEquals(2, push(onA, "t1", 2, 1, g[1], T).version());
      // B's copy writes the sequence number A's just wrote: refused, so never acknowledged.
      Duration shortly = Duration.ofSeconds(3);
      var refused = assertThrows(ExecutionException.class, () -> push(onB, "t2", 1, 1, g[2], shortly));
      assertTrue(refused.getCause() instanceof TimeoutException, "refused with " + refused.getCause());
      // Sent again (a trainer retries with the same key): B's copy has recovered A's push since.
      assertEquals(3, push(onB, "t2", 1, 1, g[2], T).version());
    } finally {
      for (ActorSystem<Void> s : List.of(a, b)) {
        s.terminate();
        s.getWhenTerminated().toCompletableFuture().get();
      }
    }
    float[] expected = init.clone();
    for (float[] grad : g) for (int i = 0; i < length; i++) expected[i] -= 0.5f * grad[i];
    ActorSystem<Void> c = node(kind);
    try {
      BlockProtocol.BlockValues last = ParameterBlock.entityRef(c, spec.entityId())
          .<BlockProtocol.BlockValues>askWithStatus(r -> new BlockProtocol.Pull(0, r), T).toCompletableFuture().get();
      assertEquals(3, last.version());
      assertBitsEqual(expected, last.values());
    } finally {
      c.terminate();
      c.getWhenTerminated().toCompletableFuture().get();
    }
  }

  private static BlockProtocol.PushAck push(EntityRef<BlockProtocol.Command> block, String trainer, long step,
      long base, float[] g, Duration timeout) throws Exception {
    return block.<BlockProtocol.PushAck>askWithStatus(
        r -> new BlockProtocol.PushGradient(trainer, step, base, 0, 1f, g, r), timeout).toCompletableFuture().get();
  }

  static void assertBitsEqual(float[] want, float[] got) {
    assertEquals(want.length, got.length);
    for (int i = 0; i < want.length; i++) {
      if (Float.floatToRawIntBits(want[i]) != Float.floatToRawIntBits(got[i])) {
        throw new AssertionError("value " + i + ": expected " + want[i] + " but was " + got[i]);
      }
    }
  }
}
