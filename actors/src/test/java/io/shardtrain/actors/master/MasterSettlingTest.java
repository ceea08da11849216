package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.master.MasterTest.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A departed trainer's task, settled with the blocks before anyone leases it again (MasterTest's
 * job, blocks and helpers).
 */
class MasterSettlingTest {
  @BeforeEach
  void startKit() {
    newKit();
  }

  @AfterEach
  void stopKit() {
    kit.shutdownTestKit();
  }

  /**
   * "a" leaves the job; once the blocks have answered for its task, "c" registers and asks for a
   * task. Registered earlier, "c" could be leased the next free task (the next epoch's first) before
   * "a"'s was settled, as the master rightly does.
   */
  static JobProtocol.TaskReply aLeavesAndCTakesOver(Setup s) {
    s.tk().<StatusReply<Done>>runCommand(r -> new JobProtocol.LeaveJob("a", r));
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!s.tk().getState().settling().isEmpty() && System.nanoTime() < deadline) sleep(20);
    assertTrue(s.tk().getState().settling().isEmpty(), "the blocks answered for a's task");
    register(s, "c", kit.createTestProbe());
    return requestSettled(s, "c");
  }

  /** The job's status as the master answers it (with what only the actor knows: the blocks' membership). */
  static JobProtocol.JobStatus status(Setup s) {
    return s.tk().<JobProtocol.JobStatus>runCommand(JobProtocol.GetStatus::new).reply();
  }

  @Test
  void aTrainerThatLeavesGivesItsTaskBackAtItsLastReportedOffset() {
    Setup s = submitted();
    TestProbe<Object> a = kit.createTestProbe();
    register(s, "a", a);
    register(s, "b", kit.createTestProbe());
    request(s, "a");
    request(s, "b");
    report(s, "a", 0, 0, 30, 3);
    // A new trainer takes the task over exactly where "a" stopped: nothing skipped, nothing twice.
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 30), aLeavesAndCTakesOver(s));
    assertEquals(List.of("b", "c"), s.tk().getState().status().members());
  }

  @Test
  void aDepartedTrainersTaskResumesWhereEveryBlockHoldsItAndNamesTheBlocksAhead() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 20, 2);
    // "a" pushed two more batches of 8 to w#0 and one to w#1, and died before reporting them.
    MARKS.put("w#0 0/0", new BlockProtocol.TaskProgress(36, 4));
    MARKS.put("w#1 0/0", new BlockProtocol.TaskProgress(28, 3));
    MARKS.put("w#1 0/1", new BlockProtocol.TaskProgress(44, 9)); // b's task: not asked about
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 28, java.util.Map.of("w#0", 36L)), aLeavesAndCTakesOver(s));
    assertEquals(28, s.tk().getState().status().examplesReported());
    assertEquals(3L, s.tk().getState().registration("a").lastStep(), "the step that pushed up to 28");
    // Once c reports past w#0's mark, the lease names no block ahead.
    assertTrue(report(s, "c", 0, 0, 36, 5).isSuccess());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 36), request(s, "c"));
  }

  @Test
  void aDepartedTrainersTaskWhoseBlocksAreSeveralBatchesPastItsLastReportResumesWhereTheyAllHoldIt() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 10, 1);
    // "a" pushed steps 2 to 4 to every block and step 5 to w#1 only, reporting none of them.
    MARKS.put("w#0 0/0", new BlockProtocol.TaskProgress(40, 4));
    MARKS.put("w#1 0/0", new BlockProtocol.TaskProgress(46, 5));
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 40, java.util.Map.of("w#1", 46L)), aLeavesAndCTakesOver(s));
    assertEquals(40, s.tk().getState().status().examplesReported());
    assertEquals(4L, s.tk().getState().registration("a").lastStep());
    // c's first batch ends where w#1's examples end (TaskLease.batchLimit), and w#1 gets nothing for it.
    assertTrue(report(s, "c", 0, 0, 46, 6).isSuccess());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 46), request(s, "c"));
  }

  @Test
  void aDepartedTrainersTaskEveryBlockHoldsToTheEndIsFinished() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 40, 5);
    MARKS.put("w#0 0/0", new BlockProtocol.TaskProgress(50, 6));
    MARKS.put("w#1 0/0", new BlockProtocol.TaskProgress(50, 6));
    // Task 0/0 is done; c gets the next epoch's first task.
    assertEquals(new JobProtocol.Lease(1, 0, 0, 50, 0), aLeavesAndCTakesOver(s));
    assertEquals(50, s.tk().getState().status().examplesReported());
  }

  @Test
  void aDepartedTrainersTaskIsLeasedToNobodyUntilEveryBlockAnswered() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 20, 2);
    MARKS.put("w#1 0/0", SILENT);
    s.tk().<StatusReply<Done>>runCommand(r -> new JobProtocol.LeaveJob("a", r));
    register(s, "c", kit.createTestProbe());
    // Not task 0/0: the next epoch's first task.
    assertEquals(new JobProtocol.Lease(1, 0, 0, 50, 0), request(s, "c"));
    sleep(450);
    assertEquals(List.of("0/1@0 -> b", "1/0@0 -> c"), s.tk().getState().status().leases());
    assertFalse(status(s).settled(), "the master still waits for w#1's answer");
    // The block answers (the next tick asks again once the first ask timed out).
    MARKS.put("w#1 0/0", new BlockProtocol.TaskProgress(24, 3));
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!s.tk().getState().settling().isEmpty() && System.nanoTime() < deadline) sleep(50);
    assertTrue(status(s).settled(), "every block answered and knows the membership");
    register(s, "d", kit.createTestProbe());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 20, java.util.Map.of("w#1", 24L)), request(s, "d"));
  }

  @Test
  void aTaskStillSettlingWhenTheMasterRestartsIsSettledByTheRecoveredMasterAndTheOutcomeIsJournaled() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 20, 2);
    MARKS.put("w#0 0/0", new BlockProtocol.TaskProgress(28, 3));
    MARKS.put("w#1 0/0", SILENT);
    s.tk().<StatusReply<Done>>runCommand(r -> new JobProtocol.LeaveJob("a", r));
    sleep(200);
    assertEquals(1, s.tk().getState().settling().size());
    s.tk().restart();
    assertEquals(1, s.tk().getState().settling().size(), "the recovered master still waits for every block");
    MARKS.put("w#1 0/0", new BlockProtocol.TaskProgress(24, 3));
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!s.tk().getState().settling().isEmpty() && System.nanoTime() < deadline) sleep(50);
    register(s, "c", kit.createTestProbe());
    JobProtocol.Lease expected = new JobProtocol.Lease(0, 0, 0, 50, 24, java.util.Map.of("w#0", 28L));
    assertEquals(expected, request(s, "c"));
    s.tk().restart();
    assertEquals(expected, request(s, "c"), "offset and blocks ahead, recovered from the journal");
    assertEquals(24, s.tk().getState().status().examplesReported());
  }
}
