package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import akka.pattern.AskTimeoutException;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.trainer.BlockRouter.Delivery;
import java.io.IOException;
import org.junit.jupiter.api.Test;

class BlockRouterTest {
  @Test
  void aPushIsDeliveredBouncedTimedOutOrRefused() {
    BlockProtocol.PushAck ack = new BlockProtocol.Accepted(3);
    BlockRouter.Result<BlockProtocol.PushAck> ok = BlockRouter.classify(false, ack, null);
    assertEquals(Delivery.DELIVERED, ok.delivery());
    assertSame(ack, ok.value());
    assertNull(ok.reason());

    // Any failure of a letter, its timeout included, goes back through sharding at once.
    assertEquals(Delivery.BOUNCED, BlockRouter.classify(true, null,
        new StatusReply.ErrorMessage("push letter for step 4 not delivered: recipient stopped")).delivery());
    assertEquals(Delivery.BOUNCED, BlockRouter.classify(true, null, new AskTimeoutException("late")).delivery());
    assertEquals(Delivery.BOUNCED, BlockRouter.classify(true, null, new IOException("reset")).delivery());

    BlockRouter.Result<BlockProtocol.PushAck> late =
        BlockRouter.classify(false, null, new AskTimeoutException("no answer within 5 s"));
    assertEquals(Delivery.TIMED_OUT, late.delivery());
    assertEquals("no answer within 5 s", late.reason());
    BlockRouter.Result<BlockProtocol.PushAck> refused =
        BlockRouter.classify(false, null, new StatusReply.ErrorMessage("gradient of 3 floats, block holds 4"));
    assertEquals(Delivery.REFUSED, refused.delivery());
    assertEquals("gradient of 3 floats, block holds 4", refused.reason());
  }

  @Test
  void aPullWhoseLetterFailedBouncesOthersTimeOutOrAreRefused() {
    BlockProtocol.BlockValues v = new BlockProtocol.BlockValues("w", 0, 0, 2, new float[] {1f});
    assertSame(v, BlockRouter.classify(true, v, null).value());
    assertEquals(Delivery.DELIVERED, BlockRouter.classify(true, v, null).delivery());

    assertEquals(Delivery.BOUNCED, BlockRouter.classify(true, null, new AskTimeoutException("late")).delivery());
    // The way a reply came and the failure's type decide, never its text.
    assertEquals(Delivery.REFUSED, BlockRouter.classify(false, null,
        new StatusReply.ErrorMessage("bulk reply failed: connection refused")).delivery());
    assertEquals(Delivery.TIMED_OUT,
        BlockRouter.classify(false, null, new AskTimeoutException("late")).delivery());
    BlockRouter.Result<BlockProtocol.BlockValues> moving = BlockRouter.classify(false, null,
        new StatusReply.ErrorMessage("block w#0 is moving to another node (at version 4); pull version 5 again"));
    assertEquals(Delivery.REFUSED, moving.delivery());
    assertEquals("block w#0 is moving to another node (at version 4); pull version 5 again", moving.reason());
  }
}
