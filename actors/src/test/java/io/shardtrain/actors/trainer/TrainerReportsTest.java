package io.shardtrain.actors.trainer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sync trainers and a master that answers their progress reports late: the trainers step on
 * meanwhile, the steps completed while a report is out go together in the next one, and once the
 * master answers it has recorded every example every block applied (TrainerRejoinTest's job).
 */
class TrainerReportsTest {
  static final Duration TIMEOUT = Duration.ofSeconds(60);
  ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /** Lets the reports held so far, and every later one, through. */
  record Release() implements JobProtocol.Internal {}

  /** Passes everything to {@code master} but holds the progress reports until {@link Release}. */
  static Behavior<JobProtocol.Command> holdingReports(ActorRef<JobProtocol.Command> master, AtomicInteger reports) {
    List<JobProtocol.Command> held = new ArrayList<>();
    boolean[] released = {false};
    return Behaviors.receiveMessage(m -> {
      if (m instanceof Release) {
        released[0] = true;
        held.forEach(master::tell);
        held.clear();
      } else if (m instanceof JobProtocol.ReportProgress) {
        reports.incrementAndGet();
        if (released[0]) master.tell(m);
        else held.add(m);
      } else {
        master.tell(m);
      }
      return Behaviors.same();
    });
  }

  @Test
  void syncTrainersStepOnWhileTheirReportsAreUnansweredAndTheMasterEndsUpWithEveryStep() throws Exception {
    // Longer than the test: a trainer that waited for a report's answer would not get past step 1.
    kit = TrainerRejoinTest.newKit("shardtrain.trainer.ask-timeout = 120s");
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = TrainerRejoinTest.startJob(kit, st, "reports");
    AtomicInteger reports = new AtomicInteger();
    ActorRef<JobProtocol.Command> master = kit.spawn(holdingReports(st.master(), reports));
    Dataset train = TrainerRejoinTest.data();
    TrainerRejoinTest.Listener l1 = new TrainerRejoinTest.Listener();
    TrainerRejoinTest.Listener l2 = new TrainerRejoinTest.Listener();
    st.startTrainer(setup(st, "t1", master, train, l1));
    st.startTrainer(setup(st, "t2", master, train, l2));

    // Not one report has reached the master, and the barrier went on for six steps.
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (l1.lastStep < 6 || l2.lastStep < 6) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the trainers wait for the master: steps " + l1.lastStep + ", " + l2.lastStep);
      }
      Thread.sleep(10);
    }
    assertEquals(0, st.status().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).examplesReported());
    master.tell(new Release());

    assertEquals(24L, l1.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    assertEquals(24L, l2.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    JobProtocol.JobStatus done = st.status().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    List<BlockProtocol.BlockStats> stats = st.blockStats(plan.job()).toCompletableFuture()
        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    System.out.printf("%d progress reports for 2 x 24 steps; %d examples reported, blocks applied %s%n", reports.get(),
        done.examplesReported(), stats.stream().map(BlockProtocol.BlockStats::examplesApplied).toList());
    assertTrue(done.done(), done.toString());
    // Both trainers had a batch of 8 in every step, and left once the master answered their last report.
    assertEquals(2 * 24 * 8, done.examplesReported());
    for (BlockProtocol.BlockStats b : stats) {
      assertEquals(24, b.version(), b.entityId());
      assertEquals(done.examplesReported(), b.examplesApplied(), b.entityId());
    }
    // Each trainer's steps 2 to 6 (at least) went in one report.
    assertTrue(reports.get() <= 2 * (24 - 4), reports.get() + " reports");
  }

  private static Trainer.Setup setup(ShardTrain st, String id, ActorRef<JobProtocol.Command> master, Dataset train,
      StepListener listener) {
    return new Trainer.Setup(id, master, train, train, () -> CpuBackend.create(1), TrainerSettings.create(st.system()),
        listener);
  }
}
