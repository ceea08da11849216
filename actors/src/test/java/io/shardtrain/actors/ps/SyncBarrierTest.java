package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockState.Contribution;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sync barrier on its own: no actor system. */
class SyncBarrierTest {

  private static Contribution from(String trainer, float weight) {
    return new Contribution(trainer, weight, new float[] {weight});
  }

  private static SyncBarrier barrierOf(String... members) {
    SyncBarrier b = new SyncBarrier();
    b.setMembership(1, List.of(members));
    return b;
  }

  @Test
  void missingNamesTheMembersThatHaveNotContributedInMembershipOrder() {
    SyncBarrier b = barrierOf("a", "b", "c");
    assertEquals(List.of("a", "b", "c"), b.missing());
    b.add(from("b", 1f));
    assertEquals(List.of("a", "c"), b.missing());
    assertEquals(List.of("b"), b.contributors());
    assertTrue(b.hasContributed("b"));
    assertFalse(b.hasContributed("a"));
  }

  @Test
  void completesOnlyWithTheLastMissingMember() {
    SyncBarrier b = barrierOf("a", "b", "c");
    b.add(from("a", 1f));
    assertFalse(b.completedBy("b"), "c is still missing");
    b.add(from("c", 1f));
    assertTrue(b.completedBy("b"));
    assertFalse(b.completedBy("x"), "a non-member does not stand in for b");
  }

  @Test
  void neverCompletesBeforeAMembershipWasReceived() {
    SyncBarrier b = new SyncBarrier();
    assertEquals(0, b.epoch());
    assertFalse(b.completedBy("a"));
    b.add(from("a", 1f));
    assertFalse(b.completeUnder(0, List.of("a")));
  }

  @Test
  void aNewMembershipCompletesAStepItsTrainersAllContributedTo() {
    SyncBarrier b = barrierOf("a", "b");
    assertFalse(b.completeUnder(2, List.of("a")), "nothing pending, nothing to complete");
    b.add(from("a", 1f));
    assertFalse(b.completeUnder(2, List.of("a", "c")));
    assertTrue(b.completeUnder(2, List.of("a")), "b left, a already pushed");
  }

  @Test
  void examplesAreTheRoundedWeightsOfTheContributionsThatCount() {
    SyncBarrier b = barrierOf("a", "b", "c");
    b.add(from("a", 1.4f));
    b.add(new Contribution("b", 0f, new float[0]));
    b.add(from("c", 2.6f));
    // round(1.4) + round(2.6); the skipped one (weight 0) has none.
    assertEquals(4, b.examples());
    assertTrue(b.isWaiting());
    b.clearPending();
    assertFalse(b.isWaiting());
    assertEquals(0, b.examples());
    assertEquals(List.of("a", "b", "c"), b.members(), "clearing the step keeps the membership");
  }

  @Test
  void aCopyIsIndependentOfTheOriginal() {
    SyncBarrier b = barrierOf("a", "b");
    b.add(from("a", 1f));
    SyncBarrier c = b.copy();
    c.add(from("b", 2f));
    c.setMembership(2, List.of("b"));
    assertEquals(1, b.epoch());
    assertEquals(List.of("a", "b"), b.members());
    assertEquals(List.of("a"), b.contributors());
    b.clearPending();
    assertEquals(List.of("a", "b"), c.contributors());
  }
}
