package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.data.Dataset;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TrainerFailureTest {
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  @Test
  void aTrainerThatThrowsTellsItsListenerWhyAndLeavesTheJob() throws Exception {
    kit = TrainerRejoinTest.newKit();
    ShardTrain st = ShardTrain.start(kit.system());
    TrainerRejoinTest.startJob(kit, st, "failing");
    Dataset train = TrainerRejoinTest.data();
    TrainerRejoinTest.Listener listener = new TrainerRejoinTest.Listener();
    // The backend is made when the registration's answer names the job: inside the actor.
    st.startTrainer(new Trainer.Setup("t1", st.master(), train, train, () -> {
      throw new IllegalStateException("no such device");
    }, TrainerSettings.create(st.system()), listener));

    ExecutionException failed = assertThrows(ExecutionException.class,
        () -> listener.finished.get(TrainerRejoinTest.TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    String why = failed.getCause().getMessage();
    assertTrue(why.contains("failed on Registered") && why.contains("no such device"), why);

    long deadline = System.nanoTime() + TrainerRejoinTest.TIMEOUT.toNanos();
    JobProtocol.JobStatus status = st.status().toCompletableFuture().get(30, TimeUnit.SECONDS);
    while (!status.members().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(50);
      status = st.status().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    assertEquals(List.of(), status.members(), "the master was told the trainer left");
  }
}
