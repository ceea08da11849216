package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.pattern.AskTimeoutException;
import io.shardtrain.actors.job.JobProtocol;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MasterLinkTest {
  @Test
  void theMastersTaskRepliesBecomeTheTrainersAnswers() {
    MasterLink.TaskAnswer leased = MasterLink.answer(new JobProtocol.Lease(1, 3, 40, 80, 12, Map.of("w#0", 20L)), null);
    assertEquals(new TaskLease(1, 3, 40, 80, 12, Map.of("w#0", 20L)),
        assertInstanceOf(MasterLink.Leased.class, leased).lease());
    assertInstanceOf(MasterLink.Forgotten.class, MasterLink.answer(new JobProtocol.NotRegistered(), null));
    MasterLink.Waiting w = assertInstanceOf(MasterLink.Waiting.class,
        MasterLink.answer(new JobProtocol.WaitForTrainers(1, 3), null));
    assertEquals(1, w.registered());
    assertEquals(3, w.expected());
    assertTrue(assertInstanceOf(MasterLink.NoTask.class, MasterLink.answer(new JobProtocol.NoTask(true), null)).jobDone());
    assertFalse(assertInstanceOf(MasterLink.NoTask.class, MasterLink.answer(new JobProtocol.NoTask(false), null)).jobDone());
    AskTimeoutException late = new AskTimeoutException("late");
    assertSame(late, assertInstanceOf(MasterLink.Unanswered.class, MasterLink.answer(null, late)).failure());
  }

  @Test
  void aReportTimedOutOnlyWhenNoAnswerCame() {
    assertTrue(new MasterLink.Reported(1, 3, new AskTimeoutException("late")).timedOut());
    assertFalse(new MasterLink.Reported(1, 3, new IllegalStateException("generation 1 is over")).timedOut());
    assertFalse(new MasterLink.Reported(1, 3, null).timedOut());
  }
}
