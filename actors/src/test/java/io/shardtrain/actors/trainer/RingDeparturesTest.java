package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A ring member leaves only once every other member applied the step it leaves after. */
class RingDeparturesTest {
  private final List<String> sent = new ArrayList<>();

  private RingDepartures member(String id) {
    return new RingDepartures(id, (to, m) -> sent.add(to + " <- " + m));
  }

  @Test
  void aLeavingMemberWaitsUntilAMemberStillInItsLastStepAppliedIt() {
    RingDepartures t1 = member("t1");
    RingDepartures t2 = member("t2");
    t1.leave(20, List.of("t1", "t2"));
    assertEquals(List.of("t2 <- LeavesAfter[trainerId=t1, step=20]"), sent);
    assertFalse(t1.allAnswered());

    // t2 still waits for t1's last mean of step 20: it answers only once it applied that step.
    sent.clear();
    t2.leaves(new RingLink.LeavesAfter("t1", 20), 19);
    t2.applied(19);
    assertEquals(List.of(), sent);
    t2.applied(20);
    assertEquals(List.of("t1 <- AppliedUpTo[trainerId=t2, step=20]"), sent);
    t2.applied(21);
    assertEquals(1, sent.size(), "answered once");

    t1.answered(new RingLink.AppliedUpTo("t2", 20));
    assertTrue(t1.allAnswered());
  }

  @Test
  void aMemberThatAppliedTheStepAnswersAtOnce() {
    RingDepartures t2 = member("t2");
    t2.leaves(new RingLink.LeavesAfter("t1", 20), 20);
    assertEquals(List.of("t1 <- AppliedUpTo[trainerId=t2, step=20]"), sent);
  }

  @Test
  void anAnswerForAnEarlierStepDoesNotLetAMemberLeave() {
    RingDepartures t1 = member("t1");
    t1.leave(30, List.of("t3", "t1", "t2"));
    assertEquals(2, sent.size());
    t1.answered(new RingLink.AppliedUpTo("t2", 29));
    t1.answered(new RingLink.AppliedUpTo("t3", 31));
    assertFalse(t1.allAnswered());
    t1.answered(new RingLink.AppliedUpTo("t2", 30));
    assertTrue(t1.allAnswered());
  }

  @Test
  void aMemberAloneInItsRingLeavesWithoutWaiting() {
    RingDepartures t1 = member("t1");
    t1.leave(5, List.of("t1"));
    assertTrue(t1.allAnswered());
    assertEquals(List.of(), sent);
  }
}
