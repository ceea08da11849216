package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.trainer.ProgressReports.Step;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Batches of 64 examples of task 0/1; step n ends at reader offset 64 n. */
class ProgressReportsTest {
  static Step step(long n) {
    return new Step(0, 1, n, 64 * n);
  }

  static void complete(ProgressReports reports, long from, long to) {
    for (long n = from; n <= to; n++) reports.completed(0, 1, n, 64 * n);
  }

  @Test
  void stepsCompletedWhileAReportIsInFlightGoTogetherInTheNextOneWhoseNewestIsTheLastStep() {
    ProgressReports reports = new ProgressReports();
    assertNull(reports.next(), "nothing to report");
    complete(reports, 1, 1);
    ProgressReports.Report first = reports.next();
    assertEquals(List.of(step(1)), first.steps());

    complete(reports, 2, 5);
    assertNull(reports.next(), "one report in flight at a time");
    assertTrue(reports.answered(first.id(), false));
    ProgressReports.Report second = reports.next();
    assertEquals(List.of(step(2), step(3), step(4), step(5)), second.steps(), "each step with its own offset");
    assertEquals(step(5), second.newest());
    assertEquals(320, second.newest().offset());
    assertTrue(reports.answered(second.id(), false));
    assertNull(reports.next());
    assertTrue(reports.allAnswered());
  }

  @Test
  void theLastStepOfATaskIsOutstandingUntilTheMasterAnsweredTheReportThatCarriesIt() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 1);
    ProgressReports.Report first = reports.next();
    complete(reports, 2, 2); // the task's last batch, while step 1's report is in flight
    assertFalse(reports.allAnswered());
    assertTrue(reports.answered(first.id(), false));
    assertFalse(reports.allAnswered(), "step 2 is not reported yet");
    ProgressReports.Report last = reports.next();
    assertEquals(List.of(step(2)), last.steps());
    assertFalse(reports.allAnswered(), "sent, not answered");
    assertTrue(reports.answered(last.id(), false));
    assertTrue(reports.allAnswered());
  }

  @Test
  void aReportWithoutAnAnswerGoesOutAgainWithTheStepsAfterIt() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 2);
    ProgressReports.Report lost = reports.next();
    complete(reports, 3, 3);
    assertTrue(reports.answered(lost.id(), true));
    assertFalse(reports.masterAnswers());
    ProgressReports.Report again = reports.next();
    assertEquals(List.of(step(1), step(2), step(3)), again.steps());
    assertFalse(reports.answered(lost.id(), false), "a late answer to the lost report changes nothing");
    assertNull(reports.next(), "the second report is still in flight");
    assertTrue(reports.answered(again.id(), false));
    assertTrue(reports.masterAnswers());
    assertTrue(reports.allAnswered());
  }

  @Test
  void aRefusedReportIsNotSentAgain() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 1);
    ProgressReports.Report refused = reports.next();
    assertTrue(reports.answered(refused.id(), false));
    assertNull(reports.next());
    assertTrue(reports.allAnswered());
  }

  @Test
  void stepsOfAnotherTaskGoInAReportOfTheirOwn() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 1);
    ProgressReports.Report first = reports.next();
    complete(reports, 2, 3);
    reports.completed(1, 0, 4, 64);
    reports.answered(first.id(), false);
    ProgressReports.Report endOfTask = reports.next();
    assertEquals(List.of(step(2), step(3)), endOfTask.steps());
    reports.answered(endOfTask.id(), false);
    assertEquals(List.of(new Step(1, 0, 4, 64)), reports.next().steps());
  }

  @Test
  void aRollbackDropsTheStepsOfTheAbandonedTimelineAndIgnoresTheAnswerToTheirReport() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 1);
    ProgressReports.Report abandoned = reports.next();
    complete(reports, 2, 3);
    reports.answered(abandoned.id(), true);
    reports.reset();
    assertTrue(reports.allAnswered());
    assertTrue(reports.masterAnswers());
    complete(reports, 2, 2);
    ProgressReports.Report redone = reports.next();
    assertFalse(reports.answered(abandoned.id(), false));
    assertEquals(List.of(step(2)), redone.steps());
  }

  @Test
  void whileTheMasterIsAwayOnlyTheNewestStepsOfATaskAreKept() {
    ProgressReports reports = new ProgressReports();
    complete(reports, 1, 1);
    ProgressReports.Report lost = reports.next();
    complete(reports, 2, 1000);
    reports.answered(lost.id(), true);
    ProgressReports.Report next = reports.next();
    assertEquals(ProgressReports.MAX_STEPS, next.steps().size());
    assertEquals(step(1000 - ProgressReports.MAX_STEPS + 1), next.steps().get(0));
    assertEquals(step(1000), next.newest());
  }
}
