package io.shardtrain.actors.master;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class TrainerLivenessTest {
  static final long SECOND = Duration.ofSeconds(1).toNanos();

  @Test
  void aMemberSilentForLongerThanTheFailureTimeoutIsOverdue() {
    TrainerLiveness liveness = new TrainerLiveness(Duration.ofSeconds(10));
    liveness.heard("a", 0);
    liveness.heard("b", 0);
    liveness.heard("a", 5 * SECOND);
    assertNull(liveness.overdue(List.of("a", "b"), 10 * SECOND), "10 s is not longer than the timeout");
    assertEquals("b", liveness.overdue(List.of("a", "b"), 11 * SECOND));
    assertNull(liveness.overdue(List.of("a"), 11 * SECOND), "only members count");
    assertEquals("a", liveness.overdue(List.of("a"), 16 * SECOND));
    assertEquals("no report for 10 s", liveness.overdueReason());
  }

  @Test
  void aMemberNeverHeardFromOrForgottenIsNotOverdue() {
    TrainerLiveness liveness = new TrainerLiveness(Duration.ofSeconds(10));
    liveness.heard("a", 0);
    liveness.forget("a");
    assertNull(liveness.overdue(List.of("a", "c"), 60 * SECOND));
  }
}
