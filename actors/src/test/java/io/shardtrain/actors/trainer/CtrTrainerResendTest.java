package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.BehaviorInterceptor;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.Entity;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.sharding.Passivation;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseSettings;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.data.CtrGenerator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A click-through trainer's requests (pushes, pulls, row fetches) that never reach their block or table shard, as Cluster
 * Sharding drops those that meet one while it moves: the trainer sends them again once the step's
 * other answers are in, long before their timeouts, and the job ends with every example applied once.
 */
class CtrTrainerResendTest {
  private static final int EXAMPLES = 640;
  private static final int BATCH = 32;
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  @Test
  void aDensePushARowPushAPullAndARowFetchLostOnTheirWayAreSentAgainAndEveryExampleIsAppliedOnce() throws Exception {
    // Timeouts far longer than the test's: only the resend can bring the lost requests' answers.
    kit = TrainerRejoinTest.newKit("""
        shardtrain.trainer { ask-timeout = 10m, pull-timeout = 10m, resend-after = 200ms }
        shardtrain.train { optimizer = adagrad, lr = 0.05, batch = 32, steps = 0, epochs = 1 }
        """);
    AtomicInteger densePushesLost = new AtomicInteger();
    AtomicInteger pullsLost = new AtomicInteger();
    AtomicInteger rowPushesLost = new AtomicInteger();
    AtomicInteger rowFetches = new AtomicInteger();
    AtomicInteger rowFetchesLost = new AtomicInteger();
    PsSettings ps = PsSettings.create(kit.system());
    SparseSettings sparse = SparseSettings.create(kit.system());
    // Before ShardTrain.start, whose init of the same entity types then finds these regions.
    ClusterSharding.get(kit.system()).init(Entity.of(ParameterBlock.ENTITY_KEY,
        ctx -> Passivation.onRetire(Behaviors.intercept(() -> TrainerResendTest.losing(densePushesLost, pullsLost),
            ParameterBlock.create(ctx.getEntityId(), ps)), BlockProtocol.Command.class, BlockProtocol.Retire.class,
            ctx.getShard())).withRole(ParameterBlock.ROLE).withStopMessage(BlockProtocol.HandOff.INSTANCE));
    ClusterSharding.get(kit.system()).init(Entity.of(SparseShard.ENTITY_KEY,
        ctx -> Passivation.onRetire(Behaviors.intercept(() -> losingRows(rowPushesLost, rowFetches, rowFetchesLost),
            SparseShard.create(ctx.getEntityId(), sparse)), SparseProtocol.Command.class, SparseProtocol.Retire.class,
            ctx.getShard())).withRole(SparseShard.ROLE).withStopMessage(SparseProtocol.HandOff.INSTANCE));
    ShardTrain st = ShardTrain.start(kit.system());
    TrainerRejoinTest.formCluster(kit);

    var config = kit.system().settings().config();
    TrainSettings s = TrainSettings.fromConfig(config);
    CtrSettings ctr = CtrSettings.fromConfig(config);
    CtrGenerator g = new CtrGenerator(new CtrGenerator.Config(4, 50, 1024, 3, 1.1, 0.3, 0.3, -1.0, 5));
    CtrDataset train = g.generate(EXAMPLES);
    CtrDataset test = g.generate(EXAMPLES, EXAMPLES + 128);
    // Two table shards and blocks of 8 floats: the dense part (bias, 3 weights, 3 vectors of 8) in several.
    ShardTrain.CtrPlan plan = ShardTrain.planCtr(s, ctr, "ctr-resend", train, BlockSpec.Mode.SYNC, 2, 8, -1, 2);
    st.submit(plan).toCompletableFuture().get(TrainerRejoinTest.TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    TrainerRejoinTest.Listener l1 = new TrainerRejoinTest.Listener();
    TrainerRejoinTest.Listener l2 = new TrainerRejoinTest.Listener();
    st.startTrainer(new CtrTrainer.Setup("t1", st.master(), train, test, TrainerSettings.create(st.system()), l1));
    st.startTrainer(new CtrTrainer.Setup("t2", st.master(), train, test, TrainerSettings.create(st.system()), l2));

    long timeout = TrainerRejoinTest.TIMEOUT.toSeconds();
    // Sync trainers step together; one whose tasks ran out first pushes empty steps until the other is done.
    // Its last may be one the other, told the job is done, never pushes: the blocks close it when that one leaves.
    long s1 = l1.finished.get(timeout, TimeUnit.SECONDS);
    long s2 = l2.finished.get(timeout, TimeUnit.SECONDS);
    assertTrue(Math.abs(s1 - s2) <= 1, "t1 took " + s1 + " steps, t2 " + s2);
    long steps = Math.max(s1, s2);
    assertTrue(steps >= EXAMPLES / BATCH / 2, "at least half of the 20 batches each: " + steps);
    assertEquals(1, densePushesLost.get(), "t1's push of step 5 to one dense block was lost");
    assertEquals(1, rowPushesLost.get(), "t1's rows of step 5 to one table shard were lost");
    assertEquals(1, pullsLost.get(), "one of the first dense pulls was lost");
    assertEquals(1, rowFetchesLost.get(), "the tenth fetch of a batch's rows from a shard was lost");
    JobProtocol.JobStatus done = st.status().toCompletableFuture().get(timeout, TimeUnit.SECONDS);
    assertTrue(done.done(), done.toString());
    assertEquals(EXAMPLES, done.examplesReported(), "every example reported once");
    List<BlockProtocol.BlockStats> blocks = st.blockStats(plan.job()).toCompletableFuture()
        .get(timeout, TimeUnit.SECONDS);
    assertTrue(blocks.size() > 1, blocks.toString());
    for (BlockProtocol.BlockStats b : blocks) {
      assertEquals(steps, b.version(), b.entityId());
      assertEquals(EXAMPLES, b.examplesApplied(), b.entityId());
    }
    // The shards may have left memory with the job's end (their counters with them): their version is journaled.
    for (int shard = 0; shard < 2; shard++) {
      SparseProtocol.ShardStats stats = SparseShard.entityRef(kit.system(), plan.job().table().entityId(shard))
          .<SparseProtocol.ShardStats>ask(SparseProtocol.GetStats::new, TrainerRejoinTest.TIMEOUT)
          .toCompletableFuture().get(timeout, TimeUnit.SECONDS);
      assertEquals(steps, stats.version(), "one sync update a step, each with both trainers' rows: " + stats);
    }
  }

  /** Loses t1's rows of step 5 at whichever table shard they reach first, and the tenth fetch of rows. */
  private static BehaviorInterceptor<SparseProtocol.Command, SparseProtocol.Command> losingRows(AtomicInteger lost,
      AtomicInteger fetches, AtomicInteger fetchesLost) {
    return new TrainerResendTest.Losing<>(SparseProtocol.Command.class, msg -> msg instanceof SparseProtocol.PushRows p
        && p.step() == 5 && p.trainerId().equals("t1") && lost.compareAndSet(0, 1)
        || msg instanceof SparseProtocol.PullRows && fetches.incrementAndGet() == 10 && fetchesLost.compareAndSet(0, 1));
  }
}
