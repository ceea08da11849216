package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AnswerLagTest {
  @Test
  void nothingIsDueBeforeAnAnswerThenAfterResendAfterDoublingWithEachResendUpTo16Times() {
    long after = 1_000_000_000L;
    AnswerLag lag = new AnswerLag();
    long start = System.nanoTime();
    assertFalse(lag.due(start + 100 * after, after), "no answer yet: the step may wait for a trainer");
    lag.answered();
    long answered = System.nanoTime();
    // Step through time a tenth of `after` at a time, resending whenever due: the gaps between resends.
    List<Long> gaps = new ArrayList<>();
    long last = answered;
    for (long now = answered; gaps.size() < 7; now += after / 10) {
      if (lag.due(now, after)) {
        gaps.add(Math.round((now - last) / (double) after));
        lag.sentAgain(now);
        last = now;
      }
    }
    assertEquals(List.of(1L, 2L, 4L, 8L, 16L, 16L, 16L), gaps);
  }
}
