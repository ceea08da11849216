package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CtrStepTest {
  private static final long AFTER = 2_000_000_000L;

  private static CtrStep step() {
    return new CtrStep(3, 512, 1536, 0.5f, 1_000_000L, List.of("fm.dense#0", "fm.dense#1"), 3);
  }

  @Test
  void theRowsPushThatLagsTheDenseBlocksAcknowledgementsByResendAfterIsDueAgain() {
    CtrStep st = step();
    assertTrue(st.overdue(System.nanoTime() + 10 * AFTER, AFTER).isEmpty(), "nothing answered: nothing shows a loss");
    st.acked("fm.dense#0");
    st.acked("fm.dense#1");
    long acked = System.nanoTime();
    assertTrue(st.overdue(acked + AFTER / 2, AFTER).isEmpty());
    CtrStep.Late late = st.overdue(acked + AFTER, AFTER);
    assertEquals(new CtrStep.Late(List.of(), true, List.of()), late);
    assertTrue(st.overdue(acked + 2 * AFTER, AFTER).isEmpty(), "sent again: next after twice as long");
    assertEquals(new CtrStep.Late(List.of(), true, List.of()), st.overdue(acked + 3 * AFTER, AFTER));
    assertTrue(st.rowsAcked(), "the rows' acknowledgement completes the step's");
    assertFalse(st.readyForNext(), "the dense blocks' values are still out");
  }

  @Test
  void aDenseBlocksPushThatLagsTheRowsAndAPullThatLagsTheOtherBlocksValuesAreDueAgain() {
    CtrStep st = step();
    st.rowsAcked();
    st.acked("fm.dense#0");
    long acked = System.nanoTime();
    assertEquals(new CtrStep.Late(List.of("fm.dense#1"), false, List.of()), st.overdue(acked + AFTER, AFTER));
    st.acked("fm.dense#1");
    st.pulls.received("fm.dense#1", 3);
    long arrived = System.nanoTime();
    // fm.dense#0's push was acknowledged without its values: its pull lags fm.dense#1's values.
    CtrStep.Late pull = st.overdue(arrived + AFTER, AFTER);
    assertEquals(new CtrStep.Late(List.of(), false, List.of("fm.dense#0")), pull);
    assertEquals("pulls of [fm.dense#0]", pull.toString());
    assertEquals("pushes to [fm.dense#1], the rows' push",
        new CtrStep.Late(List.of("fm.dense#1"), true, List.of()).toString());
  }
}
