package io.shardtrain.samples.cluster;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;

/**
 * Follows a running job through the master's status until it is done. Throughput counts the
 * examples reported from the first report on, over the time since that report, so cluster start,
 * data loading and the first step's pulls are left out, like the local run's {@code samples_per_sec}.
 */
public final class JobWatch {
  private JobWatch() {}

  /** {@code examples}: all reported; {@code samplesPerSec}: after the first report. */
  public record Result(String jobId, long examples, double trainingSeconds, double samplesPerSec,
      double wallSeconds) {

    public String summary() {
      return String.format(Locale.ROOT, "job %s done: %d examples, %.1f samples/s over %.1f s of training "
          + "(%.1f s from submit)", jobId, examples, samplesPerSec, trainingSeconds, wallSeconds);
    }
  }

  /**
   * What a poll of the job's status says; {@code started}: its planned trainers ({@code planned})
   * registered, of which {@code registered} have so far.
   */
  public record Progress(String jobId, boolean submitted, boolean started, boolean done, long examplesReported,
      int registered, int planned) {}

  /** One poll of the job's status; fails when the status is unavailable for now. */
  public interface StatusPoll {
    Progress poll() throws Exception;
  }

  /**
   * Polls every {@code every} until the job is done, printing a line when the reported examples
   * grew by a tenth of the last line's count or more, at most one a second (lines say whole
   * seconds, and two lines of the same second read as a repeat); status failures (a master that is moving) are
   * retried for {@code patience}, then it fails with the last one.
   */
  public static Result untilDone(StatusPoll status, Duration every, PrintWriter out, Duration patience)
      throws InterruptedException {
    long start = System.nanoTime();
    long firstNanos = -1;
    long firstExamples = 0;
    long printed = 0;
    long printedSecond = -1;
    int waitingSaid = -1;
    long failingSince = -1;
    while (true) {
      Progress s;
      try {
        s = status.poll();
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        long now = System.nanoTime();
        if (failingSince < 0) {
          failingSince = now;
          out.println("status unavailable (" + e.getClass().getSimpleName() + "), retrying for up to "
              + patience.toSeconds() + " s");
          out.flush();
        } else if (now - failingSince > patience.toNanos()) {
          Throwable root = e;
          while (root.getCause() != null) root = root.getCause();
          throw new IllegalStateException("no status of the job for " + patience.toSeconds() + " s: " + e.getMessage()
              + (root != e ? " (" + root.getMessage() + ")" : "") + "; is the node still up?", e);
        }
        Thread.sleep(every.toMillis());
        continue;
      }
      failingSince = -1;
      long now = System.nanoTime();
      if (s.submitted() && s.examplesReported() > 0 && firstNanos < 0) {
        firstNanos = now;
        firstExamples = s.examplesReported();
      }
      if (s.submitted() && s.done()) {
        double training = firstNanos < 0 ? 0 : (now - firstNanos) / 1e9;
        double rate = training > 0 ? (s.examplesReported() - firstExamples) / training : 0;
        return new Result(s.jobId(), s.examplesReported(), training, rate, (now - start) / 1e9);
      }
      long second = Math.round((now - start) / 1e9);
      if (s.submitted() && !s.started() && s.registered() != waitingSaid) {
        // The job trains nothing until its planned trainers registered: say so once a count, or it looks stalled.
        waitingSaid = s.registered();
        out.printf(Locale.ROOT, "%d s: waiting for trainers: %d of the %d the job plans have registered%n",
            second, s.registered(), s.planned());
        out.flush();
      }
      if (s.examplesReported() >= printed + Math.max(1, printed / 10) && second != printedSecond) {
        printed = s.examplesReported();
        printedSecond = second;
        out.printf(Locale.ROOT, "%d s: %d examples reported%n", second, printed);
        out.flush();
      }
      Thread.sleep(every.toMillis());
    }
  }
}
