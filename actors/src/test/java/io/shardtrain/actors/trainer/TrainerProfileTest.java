package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class TrainerProfileTest {
  private static final long MS = 1_000_000;

  @Test
  void stepsSplitIntoComputePushWaitPullWaitFromTheLastAckMasterWaitAndTheGapsBetweenThemAsOther() {
    TrainerProfile profile = new TrainerProfile();
    // Step 1 computes 3 ms (1 on a core), its last ack comes 0.5 ms later, the pulls 2.5 ms after
    // that, the master 0.2 ms later.
    profile.completed(new StepTimes(1 * MS, 4 * MS, MS, 4 * MS + MS / 2, 7 * MS), 7 * MS + MS / 5);
    // 0.8 ms between steps; step 2 computes 2 ms (all on a core), its pulls are in before its last
    // ack, and it waits for no report.
    profile.completed(new StepTimes(8 * MS, 10 * MS, 2 * MS, 13 * MS, 12 * MS), 13 * MS);

    StepProfile p = profile.profile();
    assertEquals(2, p.steps());
    assertEquals(12 * MS, p.wallNanos());
    assertEquals(5 * MS, p.computeNanos());
    assertEquals(3 * MS, p.computeCpuNanos());
    assertEquals(1.5, p.computeCpuMillisPerStep(), 1e-12);
    assertEquals(3 * MS + MS / 2, p.pushWaitNanos());
    assertEquals(2 * MS + MS / 2, p.pullWaitNanos());
    assertEquals(MS / 5, p.masterWaitNanos());
    assertEquals(MS - MS / 5, p.otherNanos());
    assertEquals(6.0, p.wallMillisPerStep(), 1e-12);
    assertEquals(2.5, p.millisPerStep(StepProfile.Part.COMPUTE), 1e-12);
    assertEquals(0.4, p.millisPerStep(StepProfile.Part.OTHER), 1e-12);
    assertEquals(1.75 / 6, p.share(StepProfile.Part.PUSH_WAIT), 1e-12);
  }

  @Test
  void theNextStepsForwardRunWhileAStepWaitedIsComputeTakenOutOfTheWaitItRanIn() {
    TrainerProfile profile = new TrainerProfile();
    // Compute 1..4 ms (1 ms on a core); last ack at 5 ms, last pull at 9 ms. The next step's
    // forward ran 0.4 ms before the last ack and 2 ms after it, 1.5 ms of that on a core.
    profile.completed(new StepTimes(MS, 4 * MS, MS, 5 * MS, 9 * MS, 2 * MS / 5, 2 * MS, 3 * MS / 2), 9 * MS);

    StepProfile p = profile.profile();
    assertEquals(8 * MS, p.wallNanos());
    assertEquals(5 * MS + 2 * MS / 5, p.computeNanos());
    assertEquals(2 * MS + MS / 2, p.computeCpuNanos());
    assertEquals(MS - 2 * MS / 5, p.pushWaitNanos());
    assertEquals(2 * MS, p.pullWaitNanos());
    assertEquals(0, p.otherNanos());
  }

  @Test
  void aStepWithoutDataHasNoComputeAndWaitsFromItsStart() {
    TrainerProfile profile = new TrainerProfile();
    profile.completed(new StepTimes(5 * MS, 5 * MS, 0, 6 * MS, 9 * MS), 9 * MS);

    StepProfile p = profile.profile();
    assertEquals(new StepProfile(1, 4 * MS, 0, MS, 3 * MS, 0, 0), p);
    assertEquals(0, p.otherNanos());
  }

  @Test
  void computeCpuTimeReadAMomentAfterTheWallClockNeverExceedsTheCompute() {
    TrainerProfile profile = new TrainerProfile();
    profile.completed(new StepTimes(0, 2 * MS, 2 * MS + 300, 2 * MS, 2 * MS), 2 * MS);
    assertEquals(2 * MS, profile.profile().computeCpuNanos());
  }

  @Test
  void noCompletedStepIsAnEmptyProfile() {
    StepProfile p = new TrainerProfile().profile();
    assertEquals(StepProfile.EMPTY, p);
    assertEquals(0.0, p.millisPerStep(StepProfile.Part.COMPUTE));
    assertEquals(0.0, p.share(StepProfile.Part.COMPUTE));
  }
}
