package io.shardtrain.actors.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.pattern.AskTimeoutException;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockClient.Delivery;
import io.shardtrain.actors.ps.BlockClient.Result;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.PeerGone;
import java.io.IOException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The block client's outcome classification and its letter routes, without a cluster. */
class BlockClientTest {
  private static final BulkAddress SELF = new BulkAddress("127.0.0.1", 1000);
  private static final BulkAddress PS1 = new BulkAddress("127.0.0.1", 2000);
  private static final BulkAddress PS2 = new BulkAddress("127.0.0.1", 3000);
  private static ActorTestKit kit;
  private static ActorRef<Command> blockOnPs1;
  private static ActorRef<Command> blockOnPs2;

  @BeforeAll
  static void start() {
    // Only for actor references to compare; nothing is sent to them.
    kit = ActorTestKit.create("BlockClientTest");
    blockOnPs1 = kit.<Command>createTestProbe().ref();
    blockOnPs2 = kit.<Command>createTestProbe().ref();
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static Result<BlockValues> named(BulkAddress node, ActorRef<Command> block) {
    return Result.delivered(new BlockValues("w", 0, 0, 2, new float[] {1f}, node, block));
  }

  @Test
  void aPushIsDeliveredBouncedTimedOutOrRefused() {
    BlockProtocol.PushAck ack = new BlockProtocol.Accepted(3);
    Result<BlockProtocol.PushAck> ok = BlockClient.classify(false, ack, null);
    assertEquals(Delivery.DELIVERED, ok.delivery());
    assertSame(ack, ok.value());
    assertNull(ok.reason());

    // Any failure of a letter, its timeout included, goes back through sharding at once.
    assertEquals(Delivery.BOUNCED, BlockClient.classify(true, null,
        new StatusReply.ErrorMessage("push letter for step 4 not delivered: recipient stopped")).delivery());
    assertEquals(Delivery.BOUNCED, BlockClient.classify(true, null, new AskTimeoutException("late")).delivery());
    assertEquals(Delivery.BOUNCED, BlockClient.classify(true, null, new IOException("reset")).delivery());

    Result<BlockProtocol.PushAck> late =
        BlockClient.classify(false, null, new AskTimeoutException("no answer within 5 s"));
    assertEquals(Delivery.TIMED_OUT, late.delivery());
    assertEquals("no answer within 5 s", late.reason());
    Result<BlockProtocol.PushAck> refused =
        BlockClient.classify(false, null, new StatusReply.ErrorMessage("gradient of 3 floats, block holds 4"));
    assertEquals(Delivery.REFUSED, refused.delivery());
    assertEquals("gradient of 3 floats, block holds 4", refused.reason());
  }

  @Test
  void aPullWhoseLetterFailedBouncesOthersTimeOutOrAreRefusedWhateverTheErrorSays() {
    BlockValues v = new BlockValues("w", 0, 0, 2, new float[] {1f});
    assertSame(v, BlockClient.classify(true, v, null).value());
    assertEquals(Delivery.DELIVERED, BlockClient.classify(true, v, null).delivery());

    assertEquals(Delivery.BOUNCED, BlockClient.classify(true, null, new AskTimeoutException("late")).delivery());
    // Through sharding an error is the block's refusal, whatever its text says.
    assertEquals(Delivery.REFUSED, BlockClient.classify(false, null,
        new StatusReply.ErrorMessage("bulk reply failed: connection refused")).delivery());
    assertEquals(Delivery.TIMED_OUT,
        BlockClient.classify(false, null, new AskTimeoutException("late")).delivery());
    // Through sharding too, when the block's node left the cluster while the pull waited there.
    assertEquals(Delivery.BOUNCED, BlockClient.classify(false, null,
        new PeerGone("node akka://c@127.0.0.1:2552 left the cluster")).delivery());
    Result<BlockValues> moving = BlockClient.classify(false, null,
        new StatusReply.ErrorMessage("block w#0 is moving to another node (at version 4); pull version 5 again"));
    assertEquals(Delivery.REFUSED, moving.delivery());
    assertEquals("block w#0 is moving to another node (at version 4); pull version 5 again", moving.reason());
  }

  @Test
  void aDeliveredPullNamingAnotherNodesBlockGivesItsRouteAndTheNextPullReplacesIt() {
    LetterRoutes routes = new LetterRoutes(SELF);
    assertNull(routes.get("w#0"), "through sharding until a pull reply names a route");
    routes.afterPull("w#0", named(PS1, blockOnPs1));
    assertEquals(new LetterRoutes.Route(PS1, blockOnPs1), routes.get("w#0"));
    // The block moved and a later pull through sharding found it on another node.
    routes.afterPull("w#0", named(PS2, blockOnPs2));
    assertEquals(new LetterRoutes.Route(PS2, blockOnPs2), routes.get("w#0"));
    // Answered inline without a route (a block that could not send its values by letter).
    routes.afterPull("w#0", named(null, null));
    assertNull(routes.get("w#0"));
    assertEquals(0, routes.size());
  }

  @Test
  void aPullThatDidNotDeliverForgetsTheRouteWhateverWentWrong() {
    LetterRoutes routes = new LetterRoutes(SELF);
    for (Delivery d : new Delivery[] {Delivery.BOUNCED, Delivery.TIMED_OUT, Delivery.REFUSED}) {
      routes.afterPull("w#0", named(PS1, blockOnPs1));
      routes.afterPull("w#1", named(PS2, blockOnPs2));
      routes.afterPull("w#0", Result.failed(d, "no"));
      assertNull(routes.get("w#0"), d.name());
      assertEquals(new LetterRoutes.Route(PS2, blockOnPs2), routes.get("w#1"), "another block's route stays");
    }
  }

  @Test
  void aBlocksHomeIsTheNodeOfTheActorTheLastDeliveredPullNamedAndOutlivesItsRoute() {
    LetterRoutes routes = new LetterRoutes(SELF);
    assertNull(routes.home("w#0"));
    routes.afterPull("w#0", named(PS1, blockOnPs1));
    assertEquals(blockOnPs1.path().address(), routes.home("w#0"));
    routes.afterPull("w#0", Result.failed(Delivery.BOUNCED, "node gone"));
    routes.afterPush("w#0", Delivery.BOUNCED);
    assertNull(routes.get("w#0"));
    assertEquals(blockOnPs1.path().address(), routes.home("w#0"), "a request through sharding may still go there");
    routes.afterPull("w#0", Result.delivered(new BlockValues("w", 0, 0, 2, new float[] {1f})));
    assertNull(routes.home("w#0"), "answered without naming its actor");
  }

  @Test
  void onlyABouncedPushForgetsTheRoute() {
    LetterRoutes routes = new LetterRoutes(SELF);
    routes.afterPull("w#0", named(PS1, blockOnPs1));
    for (Delivery d : new Delivery[] {Delivery.DELIVERED, Delivery.TIMED_OUT, Delivery.REFUSED}) {
      routes.afterPush("w#0", d);
      assertEquals(new LetterRoutes.Route(PS1, blockOnPs1), routes.get("w#0"), d.name());
    }
    routes.afterPush("w#0", Delivery.BOUNCED);
    assertNull(routes.get("w#0"));
  }

  @Test
  void aBlockOnThisNodeOrAClientWithoutTheChannelGetsNoRoute() {
    LetterRoutes routes = new LetterRoutes(SELF);
    routes.afterPull("w#0", named(SELF, blockOnPs1));
    assertNull(routes.get("w#0"), "a block on this node is told directly, through sharding");
    LetterRoutes off = new LetterRoutes(null);
    off.afterPull("w#0", named(PS1, blockOnPs1));
    assertNull(off.get("w#0"), "this node's channel is off");
  }
}
