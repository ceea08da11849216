package io.shardtrain.samples.cli;

import io.shardtrain.grpc.BlockState;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.Job;
import io.shardtrain.grpc.Member;
import io.shardtrain.grpc.NodeTraffic;
import io.shardtrain.grpc.Placement;
import io.shardtrain.grpc.TrainerProgress;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code status} prints of a {@link ClusterStatus}. Each print remembers what it saw, so the
 * next one ({@code status --watch}) shows rates since it: each node's examples/s and bytes/s over
 * that node's own clock, the job's examples/s, and how long each sync barrier has waited. A first
 * print shows each node's rates since the node started.
 */
final class StatusView {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneId.systemDefault());

  private final PrintWriter out;
  /** The previous print's status and when it was taken (System.nanoTime), or null before the first. */
  private ClusterStatus previous;
  private long previousAt;
  /** When each waiting barrier (block and step) was first seen waiting. */
  private Map<String, Long> waitingSince = new HashMap<>();

  StatusView(PrintWriter out) {
    this.out = out;
  }

  /** A node's examples/s and bytes/s between two reads of it, over {@code seconds} of its clock. */
  record Rates(double examplesPerSecond, double bytesPerSecond, double seconds) {}

  /**
   * The rates of {@code now} since {@code before} of the same node; since the node started when
   * there is no earlier read, or its counters went back (the node restarted).
   */
  static Rates rates(NodeTraffic before, NodeTraffic now) {
    boolean since = before != null && before.getUptimeNanos() < now.getUptimeNanos()
        && before.getExamples() <= now.getExamples() && before.getBytes() <= now.getBytes();
    long examples = now.getExamples() - (since ? before.getExamples() : 0);
    long bytes = now.getBytes() - (since ? before.getBytes() : 0);
    double seconds = (now.getUptimeNanos() - (since ? before.getUptimeNanos() : 0)) / 1e9;
    return seconds <= 0 ? new Rates(0, 0, 0) : new Rates(examples / seconds, bytes / seconds, seconds);
  }

  /** Prints {@code s}, taken at {@code at} (System.nanoTime), with rates since the print before. */
  void print(ClusterStatus s, long at) {
    out.println("members:");
    for (Member m : s.getMembersList()) {
      if (m.getRolesList().contains("client")) continue;
      out.printf("  %s  %s  %s%n", m.getAddress(), m.getStatus(), m.getRolesList());
    }
    printTraffic(s);
    out.println("parameter blocks:");
    for (Placement p : s.getPlacementList()) {
      if (p.getAnswered()) {
        out.printf("  %s  %d blocks%s%n", p.getNode(), p.getBlockIdsCount(),
            p.getBlockIdsCount() == 0 ? "" : ": " + String.join(" ", p.getBlockIdsList()));
      } else {
        out.printf("  %s  no answer%n", p.getNode());
      }
    }
    if (s.getJobsCount() > 1) {
      out.printf("jobs: %s%n", String.join(", ", s.getJobsList().stream()
          .map(j -> j.getJobId() + " (" + (s.getSubmitted() && j.getJobId().equals(s.getJob().getJobId()) ? state(s)
              : j.getRunning() ? "running" : j.getCancelled() ? "cancelled" : "done") + ")").toList()));
    }
    if (s.getSubmitted()) printJob(s, at);
    else out.println("job: none submitted");
    previous = s;
    previousAt = at;
  }

  private void printTraffic(ClusterStatus s) {
    if (s.getTrafficCount() == 0) return;
    Map<String, NodeTraffic> before = new HashMap<>();
    if (previous != null) previous.getTrafficList().forEach(t -> before.put(t.getNode(), t));
    out.printf("node traffic (examples/s: what the node's trainers trained on; bytes/s: gradients pushed to and"
        + " values pulled from its blocks, 4 bytes a value; %s):%n",
        previous == null ? "since the node started" : "since the print before");
    for (NodeTraffic t : s.getTrafficList()) {
      if (!t.getAnswered()) {
        out.printf("  %s  no answer%n", t.getNode());
        continue;
      }
      Rates r = rates(before.get(t.getNode()), t);
      out.printf(Locale.ROOT, "  %s  %.0f examples/s  %.0f bytes/s  over %.1f s%n", t.getNode(),
          r.examplesPerSecond(), r.bytesPerSecond(), r.seconds());
    }
  }

  /**
   * The shown job's state from its own status, also in the jobs line: the cluster's list calls a job
   * running until its trainers left, which comes a moment after it is done.
   */
  private static String state(ClusterStatus s) {
    return s.getCancelled() ? "cancelled" : s.getDone() ? "done" : "running";
  }

  private void printJob(ClusterStatus s, long at) {
    Job j = s.getJob();
    out.printf("job %s: %s, %s mode, epochs done %d of %s, %d examples reported%n", j.getJobId(),
        state(s), j.getMode(), s.getEpochsDone(),
        j.getSteps() <= 0 ? String.valueOf(j.getEpochs()) : "unbounded (" + j.getSteps() + " steps)",
        s.getExamplesReported());
    if (previous != null && previous.getSubmitted() && at > previousAt) {
      out.printf(Locale.ROOT, "  %.0f examples/s over the last %.1f s%n",
          (s.getExamplesReported() - previous.getExamplesReported()) / ((at - previousAt) / 1e9), (at - previousAt) / 1e9);
    }
    out.printf("  trainers (membership epoch %d): %s%n", s.getMembershipEpoch(), s.getTrainersList());
    if (!s.getStarted() && !s.getDone()) {
      // The job trains nothing until its planned trainers registered: say so, or it looks stalled.
      out.printf("  waiting for trainers: %d of the %d the job plans (shardtrain.train.trainers) have registered%n",
          s.getTrainersCount(), j.getTrainers());
    }
    for (TrainerProgress t : s.getTrainerProgressList()) {
      String task = t.getEpoch() < 0 ? "no task"
          : String.format("epoch %d task %d at offset %d of %d", t.getEpoch(), t.getTask(), t.getOffset(), t.getTaskLength());
      out.printf("    %s on %s: %s, last step %d%n", t.getTrainerId(), t.getNode(), task, t.getLastStep());
    }
    if (s.getCheckpointStep() >= 0) {
      out.printf("  last checkpoint: step %d in %s%n", s.getCheckpointStep(), s.getCheckpointDir());
    }
    if (!Double.isNaN(s.getTestAuc()) && s.getTestAucExamples() > 0) {
      out.printf(Locale.ROOT, "  test_auc %.4f over %d test examples%n", s.getTestAuc(), s.getTestAucExamples());
    }
    if (s.getGeneration() > 0) out.printf("  rolled back to a checkpoint %d time(s)%n", s.getGeneration());
    printBarriers(s.getBlocksList(), at);
    List<BlockState> failed = s.getBlocksList().stream().filter(b -> !b.getLastError().isEmpty()).toList();
    if (!failed.isEmpty()) out.println("  last error of each block that had one:");
    for (BlockState b : failed) {
      out.printf("    %s  at %s: %s%n", b.getBlockId(), CLOCK.format(Instant.ofEpochMilli(b.getLastErrorAtMillis())),
          b.getLastError());
    }
  }

  private void printBarriers(List<BlockState> blocks, long at) {
    List<BlockState> waiting = blocks.stream().filter(b -> b.getWaitingForCount() > 0).toList();
    if (!waiting.isEmpty()) out.println("  sync barriers waiting:");
    Map<String, Long> still = new HashMap<>();
    for (BlockState b : waiting) {
      String key = b.getBlockId() + "@" + b.getPendingStep();
      long since = waitingSince.getOrDefault(key, at);
      still.put(key, since);
      out.printf(Locale.ROOT, "    %s  version %d, step %d waits for %s%s%n", b.getBlockId(), b.getVersion(),
          b.getPendingStep(), b.getWaitingForList(),
          since < at ? String.format(Locale.ROOT, " (for at least %.1f s)", (at - since) / 1e9) : "");
    }
    waitingSince = still;
    for (BlockState b : blocks) {
      if (!b.getAnswered()) out.printf("    %s  no answer%n", b.getBlockId());
    }
  }
}
