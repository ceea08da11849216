package io.shardtrain.samples.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** How {@code submit --wait} follows a job: through a moving master's gaps, but not past a node that is gone. */
class JobWatchTest {
  private final StringWriter printed = new StringWriter();
  private final PrintWriter out = new PrintWriter(printed, true);

  @Test
  void aGapShorterThanThePatienceIsWaitedOutAndTheJobsEndReported() throws Exception {
    ArrayDeque<Object> polls = new ArrayDeque<>(List.of(new JobWatch.Progress("j", true, true, false, 100, 2, 2),
        new IllegalStateException("master moving"), new IllegalStateException("master moving"),
        new JobWatch.Progress("j", true, true, true, 640, 2, 2)));
    JobWatch.Result r = JobWatch.untilDone(() -> {
      Object next = polls.poll();
      if (next instanceof Exception e) throw e;
      return (JobWatch.Progress) next;
    }, Duration.ofMillis(1), out, Duration.ofSeconds(30));
    assertEquals("j", r.jobId());
    assertEquals(640, r.examples());
    assertEquals(1, printed.toString().lines().filter(l -> l.startsWith("status unavailable")).count(),
        "one line for the gap, not one a poll:\n" + printed);
  }

  @Test
  void aJobWaitingForItsTrainersSaysSoOnceForEachCount() throws Exception {
    ArrayDeque<JobWatch.Progress> polls = new ArrayDeque<>(List.of(new JobWatch.Progress("j", true, false, false, 0, 0, 2),
        new JobWatch.Progress("j", true, false, false, 0, 1, 2), new JobWatch.Progress("j", true, false, false, 0, 1, 2),
        new JobWatch.Progress("j", true, true, false, 0, 2, 2), new JobWatch.Progress("j", true, true, true, 64, 2, 2)));
    JobWatch.untilDone(polls::poll, Duration.ofMillis(1), out, Duration.ofSeconds(30));
    List<String> waiting = printed.toString().lines().filter(l -> l.contains("waiting for trainers")).toList();
    assertEquals(2, waiting.size(), printed.toString());
    assertTrue(waiting.get(1).endsWith("waiting for trainers: 1 of the 2 the job plans have registered"), waiting.get(1));
  }

  @Test
  void progressIsOneLineASecondHoweverFastTheExamplesGrow() throws Exception {
    ArrayDeque<JobWatch.Progress> polls = new ArrayDeque<>(List.of(new JobWatch.Progress("j", true, true, false, 100, 2, 2),
        new JobWatch.Progress("j", true, true, false, 200, 2, 2), new JobWatch.Progress("j", true, true, false, 400, 2, 2),
        new JobWatch.Progress("j", true, true, false, 800, 2, 2), new JobWatch.Progress("j", true, true, true, 1600, 2, 2)));
    JobWatch.untilDone(polls::poll, Duration.ofMillis(1), out, Duration.ofSeconds(30));
    assertEquals(List.of("0 s: 100 examples reported"),
        printed.toString().lines().filter(l -> l.contains("examples reported")).toList());
  }

  @Test
  void statusThatStaysUnavailablePastThePatienceFailsNamingWhy() {
    AtomicInteger polls = new AtomicInteger();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> JobWatch.untilDone(() -> {
      polls.incrementAndGet();
      throw new IllegalStateException("UNAVAILABLE: io exception", new ConnectException("Connection refused"));
    }, Duration.ofMillis(50), out, Duration.ofSeconds(1)));
    assertEquals("no status of the job for 1 s: UNAVAILABLE: io exception (Connection refused); is the node still"
        + " up?", e.getMessage());
    assertTrue(polls.get() >= 10, "polled through the patience: " + polls.get());
  }
}
