package io.shardtrain.actors.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.Address;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Down;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockClient.Delivery;
import io.shardtrain.actors.ps.BlockClient.PullRequest;
import io.shardtrain.actors.ps.BlockClient.Result;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link BlockClient} on a client node whose only {@code ps} node is downed and removed while a
 * request through sharding waits there: the request is given up at the removal, long before its
 * timeout, and sent again.
 */
class BlockClientDepartureTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  /** The client's ask timeouts: far beyond what the test waits for the removal's effect. */
  private static final Duration LONG = Duration.ofSeconds(60);
  private ActorTestKit ps;
  private ActorTestKit client;

  private record Run(Consumer<BlockClient<Object>> action) {}

  private record Seen(BlockClient.Pulled reply, Result<?> result) {}

  @BeforeEach
  void start() {
    // The downed ps node stops its cluster daemon, and the client removes it once it finds the node
    // unreachable: about 2 s after the down with these, 7 s with Akka's heartbeat pause and 1 s
    // ticks. At the end the client's region would wait 10 s to hand its shards to a coordinator
    // that left with the ps node.
    ActorTestKit[] kits = ParameterBlockBulkTest.cluster("BlockClientDepartureTest", true, ConfigFactory.parseString("""
        akka.cluster.failure-detector.heartbeat-interval = 300ms
        akka.cluster.failure-detector.acceptable-heartbeat-pause = 1500ms
        akka.cluster.failure-detector.first-heartbeat-estimate = 300ms
        akka.cluster.unreachable-nodes-reaper-interval = 250ms
        akka.cluster.leader-actions-interval = 250ms
        akka.coordinated-shutdown.phases.cluster-sharding-shutdown-region.timeout = 1s
        """));
    ps = kits[0];
    client = kits[1];
  }

  @AfterEach
  void stop() {
    client.shutdownTestKit();
    ps.shutdownTestKit();
  }

  private static Behavior<Object> clientActor(ActorRef<Seen> seen) {
    return Behaviors.setup(ctx -> {
      BlockClient<Object> c = new BlockClient<>(ctx, "t0", LONG, LONG, p -> p, p -> p);
      return Behaviors.receive(Object.class)
          .onMessage(Run.class, r -> {
            r.action().accept(c);
            return Behaviors.same();
          })
          .onMessage(BlockClient.Pulled.class, m -> {
            seen.tell(new Seen(m, c.outcome(m)));
            return Behaviors.same();
          })
          .build();
    });
  }

  private String zeroBlock() throws Exception {
    int length = 100;
    BlockSpec spec = BlockSpec.of(new BlockSlice(BlockTestSupport.freshParameter(), 0, 0, length),
        OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "constant", 0.5f, BlockSpec.Mode.SYNC,
        PsSettings.create(ps.system()));
    EntityRef<Command> b = ParameterBlock.entityRef(client.system(), spec.entityId());
    b.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, new float[length], r), TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    b.<Long>askWithStatus(r -> new BlockProtocol.UpdateMembership(1, List.of("t0"), r), TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    return spec.entityId();
  }

  @Test
  void aPullThroughShardingWaitingOnTheBlocksNodeBouncesWhenTheClusterRemovesThatNode() throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(seen.ref()));
    actor.tell(new Run(c -> c.pull(new PullRequest(block, 0, 0))));
    Seen first = seen.expectMessageClass(Seen.class, TIMEOUT);
    assertEquals(Delivery.DELIVERED, first.result().delivery());
    Address home = ps.system().address();

    // As after a pull that timed out: the route is forgotten, the block's node still known. The
    // block is at version 0, so a pull of version 1 waits there.
    actor.tell(new Run(c -> {
      c.routes().afterPull(block, Result.failed(Delivery.TIMED_OUT, "no answer"));
      c.pull(new PullRequest(block, 1, 0));
    }));
    seen.expectNoMessage(Duration.ofMillis(500));

    Cluster.get(client.system()).manager().tell(new Down(home));

    Seen bounced = seen.expectMessageClass(Seen.class, Duration.ofSeconds(20));
    assertFalse(bounced.reply().byLetter(), "it went through sharding");
    assertEquals(Delivery.BOUNCED, bounced.result().delivery());
    assertTrue(bounced.result().reason().contains("left the cluster"), bounced.result().reason());
  }

  @Test
  void aPullThroughShardingFromAClientThatNeverHeardOfTheBlocksNodeBouncesWhenTheClusterRemovesANode()
      throws Exception {
    String block = zeroBlock();
    TestProbe<Seen> seen = client.createTestProbe();
    ActorRef<Object> actor = client.spawn(clientActor(seen.ref()));
    // The first pull of a fresh client: no home is known. The block is at version 0, so a pull of
    // version 1 waits on the ps node.
    actor.tell(new Run(c -> {
      assertNull(c.routes().home(block), "no home known yet");
      c.pull(new PullRequest(block, 1, 0));
    }));
    seen.expectNoMessage(Duration.ofMillis(500));

    Cluster.get(client.system()).manager().tell(new Down(ps.system().address()));

    Seen bounced = seen.expectMessageClass(Seen.class, Duration.ofSeconds(20));
    assertFalse(bounced.reply().byLetter(), "it went through sharding");
    assertEquals(Delivery.BOUNCED, bounced.result().delivery());
    assertTrue(bounced.result().reason().contains("left the cluster"), bounced.result().reason());
  }
}
