package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class TrainerCountsTest {
  @Test
  void aRollbackTakesBackTheStepsAfterTheCheckpointButNotThePushesAndPullsStarted() {
    TrainerCounts counts = new TrainerCounts();
    for (long step = 1; step <= 7; step++) {
      counts.pushStarted();
      counts.pullStarted();
      counts.stepCompleted(step);
    }
    counts.stalePush();
    counts.rolledBackTo(4);
    assertEquals(4, counts.stepsDone());
    counts.rolledBackTo(6);
    assertEquals(4, counts.stepsDone(), "a checkpoint after the last completed step takes back nothing");
    counts.stepCompleted(5);
    assertEquals(5, counts.stepsDone());
    assertEquals(7, counts.pushes());
    assertEquals(7, counts.pulls());
    assertEquals(1, counts.stale());
  }
}
