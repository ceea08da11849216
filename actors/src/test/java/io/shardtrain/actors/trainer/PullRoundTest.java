package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PullRoundTest {
  @Test
  void aRoundWaitsForEveryBlockAndKnowsTheOldestAndNewestVersionPulled() {
    PullRound round = new PullRound(List.of("a#0", "a#1", "b#0"), 0);
    assertTrue(round.awaits("a#1"));
    assertTrue(round.received("a#1", 12));
    assertFalse(round.awaits("a#1"));
    assertFalse(round.received("a#1", 99), "an answer for a block already in is not taken");
    assertFalse(round.received("c#0", 1), "nor one for a block not in the round");
    assertThrows(IllegalStateException.class, round::oldest);
    assertTrue(round.received("b#0", 11));
    assertFalse(round.done());
    assertTrue(round.received("a#0", 12));

    assertTrue(round.done());
    assertEquals(11, round.oldest());
    assertEquals(12, round.newest());
    assertEquals(0, round.minVersion());
  }

  @Test
  void aRoundNotesWhenItsLastBlockCameIn() {
    PullRound round = new PullRound(List.of("a#0", "b#0"), 4);
    round.received("a#0", 4);
    assertThrows(IllegalStateException.class, round::doneAt);
    long before = System.nanoTime();
    round.received("b#0", 4);
    long after = System.nanoTime();

    assertTrue(round.doneAt() >= before && round.doneAt() <= after, round.doneAt() + " outside [" + before + ", "
        + after + "]");
  }

  @Test
  void aRoundNeedsBlocks() {
    assertThrows(IllegalArgumentException.class, () -> new PullRound(List.of(), 3));
  }

  @Test
  void aBlockWhoseValuesLagTheRoundsOtherAnswersByResendAfterIsDueAgainButNotBeforeAnyAnswer() {
    long after = 1_000_000_000L;
    PullRound round = new PullRound(List.of("a#0", "a#1", "b#0"), 0);
    long sent = System.nanoTime();
    assertEquals(List.of(), round.overdue(sent + 10 * after, after, b -> false));
    round.received("a#0", 3);
    long arrived = System.nanoTime();
    assertEquals(List.of(), round.overdue(arrived + after - 1_000_000, after, b -> false));
    assertEquals(List.of("b#0"), round.overdue(arrived + after, after, "a#1"::equals), "a#1 skipped");
    assertEquals(List.of(), round.overdue(arrived + 2 * after, after, b -> false), "sent again: twice as long");
    assertEquals(List.of("a#1", "b#0"), round.overdue(arrived + 3 * after, after, b -> false));
  }
}
