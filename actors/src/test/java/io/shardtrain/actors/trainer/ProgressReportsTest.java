package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ProgressReportsTest {
  @Test
  void aSyncStepWaitsForItsReportOnlyWhileTheMasterAnswers() {
    ProgressReports reports = new ProgressReports();
    assertFalse(reports.mustWait(), "nothing sent yet");
    assertFalse(reports.answered(1, false), "no report of step 1 was sent");

    reports.sent(1);
    assertTrue(reports.mustWait());
    assertTrue(reports.answered(1, false));
    assertFalse(reports.mustWait());

    reports.sent(2);
    assertTrue(reports.answered(2, true), "no answer in time");
    assertFalse(reports.masterAnswers());
    reports.sent(3);
    assertFalse(reports.mustWait(), "the master is moving: train on");
    assertFalse(reports.answered(2, false), "the answer to an older report changes nothing");
    assertFalse(reports.masterAnswers());
    assertTrue(reports.answered(3, false));
    assertTrue(reports.masterAnswers());
    reports.sent(4);
    assertTrue(reports.mustWait(), "the master answers again");
  }

  @Test
  void aRollbackForgetsTheReportInFlightAndTrustsTheMasterAgain() {
    ProgressReports reports = new ProgressReports();
    reports.sent(5);
    reports.answered(5, true);
    reports.sent(6);
    reports.reset();
    assertFalse(reports.mustWait());
    assertTrue(reports.masterAnswers());
  }
}
