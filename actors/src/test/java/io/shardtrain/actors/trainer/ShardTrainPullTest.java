package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
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
    kit = TrainerRejoinTest.newKit("shardtrain.trainer.ask-timeout = 5s");
    ShardTrain st = ShardTrain.start(kit.system());
    String block = TrainerRejoinTest.startJob(kit, st, "pulled").job().blocks().get(0);
    assertEquals(0, st.pull(block, 0).toCompletableFuture().get(30, TimeUnit.SECONDS).version());
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> st.pull(block, 1_000_000).toCompletableFuture().get(60, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof java.util.concurrent.TimeoutException, String.valueOf(e.getCause()));
    String m = e.getCause().getMessage();
    assertTrue(m.matches("block " + java.util.regex.Pattern.quote(block) + " has no values at version >= 1000000 after"
        + " \\d+ s \\(shardtrain.trainer.ask-timeout 5 s\\): it is at version 0"), m);
  }
}
