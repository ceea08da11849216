package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.Behavior;
import akka.actor.typed.BehaviorInterceptor;
import akka.actor.typed.TypedActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.Entity;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.actors.sharding.Passivation;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A request that never reaches its block, as Cluster Sharding drops one that meets a block while it
 * moves: the trainer sends it again once the step's other blocks have answered, long before its
 * timeout, and the job ends with every example applied once.
 */
class TrainerResendTest {
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  @Test
  void aPullAndAPushLostOnTheirWayAreSentAgainAndTheJobEndsWithoutWaitingOutTheirTimeouts() throws Exception {
    // Timeouts far longer than the test's: only the resend can bring the lost requests' answers.
    kit = TrainerRejoinTest.newKit("shardtrain.trainer { ask-timeout = 10m, pull-timeout = 10m, resend-after = 200ms }");
    AtomicInteger pushesLost = new AtomicInteger();
    AtomicInteger pullsLost = new AtomicInteger();
    PsSettings ps = PsSettings.create(kit.system());
    // Before ShardTrain.start, whose init of the same entity type then finds this region.
    ClusterSharding.get(kit.system()).init(Entity.of(ParameterBlock.ENTITY_KEY,
        ctx -> Passivation.onRetire(Behaviors.intercept(() -> losing(pushesLost, pullsLost),
            ParameterBlock.create(ctx.getEntityId(), ps)), BlockProtocol.Command.class, BlockProtocol.Retire.class,
            ctx.getShard())).withRole(ParameterBlock.ROLE).withStopMessage(BlockProtocol.HandOff.INSTANCE));
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = TrainerRejoinTest.startJob(kit, st, "resend");
    Dataset train = TrainerRejoinTest.data();
    TrainerRejoinTest.Listener l1 = new TrainerRejoinTest.Listener();
    TrainerRejoinTest.Listener l2 = new TrainerRejoinTest.Listener();
    st.startTrainer(setup(st, "t1", train, l1));
    st.startTrainer(setup(st, "t2", train, l2));

    long timeout = TrainerRejoinTest.TIMEOUT.toSeconds();
    assertEquals(24L, l1.finished.get(timeout, TimeUnit.SECONDS));
    assertEquals(24L, l2.finished.get(timeout, TimeUnit.SECONDS));
    assertEquals(1, pushesLost.get(), "t1's push of step 5 to one block was lost");
    assertEquals(1, pullsLost.get(), "one of the first pulls was lost");
    JobProtocol.JobStatus done = st.status().toCompletableFuture().get(timeout, TimeUnit.SECONDS);
    List<BlockProtocol.BlockStats> stats = st.blockStats(plan.job()).toCompletableFuture()
        .get(timeout, TimeUnit.SECONDS);
    assertTrue(done.done(), done.toString());
    for (BlockProtocol.BlockStats b : stats) {
      assertEquals(24, b.version(), b.entityId());
      assertEquals(done.examplesReported(), b.examplesApplied(), b.entityId());
    }
    assertEquals(24 * 2 * 8, done.examplesReported(), "both trainers' 24 batches of 8");
  }

  /** Loses, whichever block it reaches first, t1's push of step 5 and the first pull. */
  static BehaviorInterceptor<BlockProtocol.Command, BlockProtocol.Command> losing(AtomicInteger pushesLost,
      AtomicInteger pullsLost) {
    return new Losing<>(BlockProtocol.Command.class, msg -> msg instanceof BlockProtocol.PushGradient p
        && p.step() == 5 && p.trainerId().equals("t1") && pushesLost.compareAndSet(0, 1)
        || msg instanceof BlockProtocol.Pull && pullsLost.compareAndSet(0, 1));
  }

  /** Loses the messages {@code lost} says, on their way into the behavior: as a moving block's region drops them. */
  static final class Losing<T> extends BehaviorInterceptor<T, T> {
    private final java.util.function.Predicate<T> lost;

    Losing(Class<T> type, java.util.function.Predicate<T> lost) {
      super(type);
      this.lost = lost;
    }

    @Override
    public Behavior<T> aroundReceive(TypedActorContext<T> ctx, T msg, ReceiveTarget<T> target) {
      return lost.test(msg) ? Behaviors.same() : target.apply(ctx, msg);
    }
  }

  private static Trainer.Setup setup(ShardTrain st, String id, Dataset train, StepListener listener) {
    return new Trainer.Setup(id, st.master(), train, train, () -> CpuBackend.create(1),
        TrainerSettings.create(st.system()), listener);
  }
}
