package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class StepProfileTest {
  @Test
  void profilesOfSeveralTrainersAddStepsWallTimesAndParts() {
    StepProfile a = new StepProfile(10, 100, 40, 10, 30, 5, 20);
    StepProfile b = new StepProfile(20, 300, 60, 20, 150, 0, 60);

    StepProfile all = a.plus(b);
    assertEquals(new StepProfile(30, 400, 100, 30, 180, 5, 80), all);
    assertEquals(85, all.otherNanos());
    assertEquals(0.45, all.share(StepProfile.Part.PULL_WAIT), 1e-12);
    assertEquals(a, StepProfile.EMPTY.plus(a));
  }

  @Test
  void partsThatAddUpToMoreThanTheWallTimeOrBelowZeroAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new StepProfile(1, 10, 5, 5, 1, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new StepProfile(1, 10, -1, 0, 0, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new StepProfile(1, 10, 5, 0, 0, 0, 6), "more CPU than compute");
  }
}
