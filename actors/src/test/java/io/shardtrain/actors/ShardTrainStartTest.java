package io.shardtrain.actors;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class ShardTrainStartTest {
  /** Before: started, then the first block or master failed in the log and every ask timed out. */
  @Test
  void aSystemWithoutAJournalIsRefusedAtOnceNamingWhatToCall() {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "no-journal", ConfigFactory.load());
    try {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> ShardTrain.start(system));
      assertTrue(e.getMessage().startsWith("the ActorSystem has no journal: create it with the config of"
          + " io.shardtrain.persistence.journal.JournalConfig.of(config) and call Journal.start(system)"),
          e.getMessage());
    } finally {
      system.terminate();
    }
  }
}
