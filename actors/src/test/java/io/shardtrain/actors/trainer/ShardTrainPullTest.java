package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.transport.BulkTransport;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link ShardTrain#pull} of a version its block has not reached, as a library user may ask of a finished job. */
class ShardTrainPullTest {
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  @Test
  void aPullOfAVersionNotReachedFailsNamingTheVersionTheBlockIsAt() throws Exception {
    pullNotReached("shardtrain.trainer.ask-timeout = 5s");
  }

  /**
   * Over the bulk channel too, after one wait of the ask timeout (the message says 5-7 s, not 10): the
   * block's version says an inline retry would wait in vain.
   */
  @Test
  void overTheBulkChannelAPullOfAVersionNotReachedFailsAfterOneWait() throws Exception {
    pullNotReached("shardtrain.trainer.ask-timeout = 5s\nshardtrain.transport.bulk.enabled = on");
    assertTrue(BulkTransport.get(kit.system()).isEnabled());
  }

  private void pullNotReached(String config) throws Exception {
    kit = TrainerRejoinTest.newKit(config);
    ShardTrain st = ShardTrain.start(kit.system());
    String block = TrainerRejoinTest.startJob(kit, st, "pulled").job().blocks().get(0);
    assertEquals(0, st.pull(block, 0).toCompletableFuture().get(30, TimeUnit.SECONDS).version());
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> st.pull(block, 1_000_000).toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof java.util.concurrent.TimeoutException, String.valueOf(e.getCause()));
    String m = e.getCause().getMessage();
    assertTrue(m.matches("block " + java.util.regex.Pattern.quote(block) + " has no values at version >= 1000000 after"
        + " [5-7] s \\(shardtrain.trainer.ask-timeout 5 s\\): it is at version 0"), m);
  }
}
