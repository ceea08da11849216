package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ps.BlockProtocol;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StepInFlightTest {
  private static final List<String> BLOCKS = List.of("w#0", "w#1", "b#0");

  /** One layer held by all three blocks. */
  private static ForwardAhead ahead() {
    return new ForwardAhead(new LayerReadiness(List.of(BLOCKS)));
  }

  @Test
  void aTrainingStepPushesEachBlockItsSliceWithTheBatchMarkAndIsDoneOnceEveryPushIsAckedAndEveryBlockPulled() {
    TaskLease lease = new TaskLease(2, 5, 0, 100, 16, Map.of());
    StepInFlight st = StepInFlight.training(7, 8, lease, 24, new PullRound(BLOCKS, 7), ahead());
    StepInFlight.PendingPush w0 = st.gradient("w#0", () -> new float[] {1f, 2f});
    st.gradient("w#1", () -> new float[] {3f});
    st.gradient("b#0", () -> new float[] {4f});

    assertArrayEquals(new float[] {1f, 2f}, w0.values());
    assertEquals(8f, w0.weight());
    assertEquals(new BlockProtocol.TaskMark(2, 5, 24), st.markOf(w0));
    assertSame3Awaited(st);

    assertFalse(st.acked("w#1"));
    assertFalse(st.acked("w#1"), "a second ack of the same block changes nothing");
    assertNull(st.pending("w#1"));
    assertFalse(st.acked("b#0"));
    assertTrue(st.acked("w#0"), "the last push acked");
    assertFalse(st.done(), "the pulls are still out");

    for (String b : BLOCKS) st.pulls().received(b, 7);
    assertTrue(st.done());
  }

  private static void assertSame3Awaited(StepInFlight st) {
    for (String b : BLOCKS) assertTrue(st.awaitsPush(b), b);
    assertFalse(st.awaitsPush("other#0"));
  }

  @Test
  void aBlockThatHoldsTheBatchAlreadyGetsNothingWithoutAMarkAndTheSliceIsNotEvenMade() {
    // w#0 holds the task's examples up to offset 24, b#0 only up to 16.
    TaskLease lease = new TaskLease(0, 1, 0, 100, 16, Map.of("w#0", 24L, "b#0", 16L));
    StepInFlight st = StepInFlight.training(3, 8, lease, 24, new PullRound(BLOCKS, 3), ahead());
    StepInFlight.PendingPush skipped = st.gradient("w#0", () -> {
      throw new AssertionError("no slice for a block that holds the batch");
    });
    StepInFlight.PendingPush pushed = st.gradient("b#0", () -> new float[] {5f});

    assertEquals(0, skipped.values().length);
    assertEquals(0f, skipped.weight());
    assertNull(st.markOf(skipped));
    assertEquals(8f, pushed.weight());
    assertEquals(new BlockProtocol.TaskMark(0, 1, 24), st.markOf(pushed));
  }

  @Test
  void aStepWithoutDataPushesNothingEverywhereAndRefusesGradients() {
    StepInFlight st = StepInFlight.withoutData(4, new PullRound(BLOCKS, 4), ahead());
    StepInFlight.PendingPush p = st.nothing("w#0");
    assertEquals(0, st.examples());
    assertEquals(0f, p.weight());
    assertNull(st.markOf(p));
    assertThrows(IllegalStateException.class, () -> st.gradient("w#1", () -> new float[1]));
    assertThrows(IllegalStateException.class, () -> st.nothing("w#0"), "one push per block and step");
  }

  @Test
  void aStepKnowsWhenItComputedWhenItsLastPushWasAckedAndWhenItsLastPullCameIn() {
    StepInFlight st = StepInFlight.withoutData(2, new PullRound(BLOCKS, 2), ahead());
    for (String b : BLOCKS) st.nothing(b);
    st.computed(Float.NaN, 1_000, 4_000, 2_500);
    assertEquals(3_000, st.computeNanos());
    st.acked("w#0");
    st.acked("w#1");
    long beforeAck = System.nanoTime();
    st.acked("b#0");
    long afterAck = System.nanoTime();
    for (String b : BLOCKS) st.pulls().received(b, 2);

    StepTimes t = st.times();
    assertEquals(1_000, t.computeStarted());
    assertEquals(4_000, t.computed());
    assertEquals(2_500, t.computeCpuNanos());
    assertTrue(t.pushesAcked() >= beforeAck && t.pushesAcked() <= afterAck, "the last ack, not an earlier one");
    assertTrue(t.pullsDone() >= afterAck, "the pulls came in after the last ack");
  }

  @Test
  void aStopRequestIsKeptForTheEndOfTheStep() {
    StepInFlight st = StepInFlight.withoutData(1, new PullRound(BLOCKS, 1), ahead());
    assertFalse(st.stopRequested());
    st.requestStop();
    assertTrue(st.stopRequested());
  }

  @Test
  void aPushOrPullThatLagsTheStepsOtherAnswersByResendAfterIsDueAgainOnceEveryResendAfter() {
    long after = 2_000_000_000L;
    StepInFlight st = StepInFlight.training(7, 8, new TaskLease(0, 1, 0, 100, 16, Map.of()), 24,
        new PullRound(BLOCKS, 7), ahead());
    for (String b : BLOCKS) st.gradient(b, () -> new float[] {1f});
    long sent = System.nanoTime();
    assertEquals(List.of(), st.overdue(sent + 10 * after, after), "no answer yet: nothing shows a request lost");

    st.acked("w#0");
    st.acked("b#0");
    long acked = System.nanoTime();
    assertEquals(List.of(), st.overdue(acked + after / 2, after), "w#1's ack may still be on its way");
    long now = acked + after;
    assertEquals(List.of("w#1"), st.overdue(now, after), "w#1 lags the other acks by resend-after");
    assertEquals(List.of(), st.overdue(now + after, after), "sent again at now: next after twice as long");
    assertEquals(List.of("w#1"), st.overdue(now + 2 * after, after));

    // Sync: w#1's push acknowledged, all three pulls out; two blocks answer them.
    st.acked("w#1");
    assertEquals(List.of(), st.overdue(now + 5 * after, after), "no values yet: the step may wait for a trainer");
    st.pulls().received("w#0", 7);
    st.pulls().received("w#1", 7);
    long arrived = System.nanoTime();
    assertEquals(List.of(), st.overdue(arrived + after / 2, after));
    assertEquals(List.of("b#0"), st.overdue(arrived + after, after), "b#0's values lag the others'");
    st.pulls().received("b#0", 7);
    assertEquals(List.of(), st.overdue(arrived + 10 * after, after));
    assertTrue(st.done());
  }

  @Test
  void aPullThatRidesOnAnUnacknowledgedPushIsDueWithThePushNotOnItsOwn() {
    long after = 1_000_000L;
    StepInFlight st = StepInFlight.withoutData(4, new PullRound(BLOCKS, 4), ahead());
    for (String b : BLOCKS) st.nothing(b);
    st.acked("w#0");
    st.acked("w#1");
    st.pulls().received("w#0", 4);
    st.pulls().received("w#1", 4);
    long now = System.nanoTime() + after;
    assertEquals(List.of("b#0"), st.overdue(now, after), "b#0 once, as its push, which asks for its values");
  }
}
