package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Terminated;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.AskTimeoutException;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobProtocol;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MasterLinkTest {
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /**
   * A leaving trainer stops only once the master recorded its leave: stopped at once, the master's
   * death watch could overtake the leave and the master would take it for a lost trainer.
   */
  @Test
  void aLeavingTrainerStopsOnceTheMasterAcknowledgedItsLeave() {
    kit = ActorTestKit.create();
    TestProbe<JobProtocol.Command> master = kit.createTestProbe();
    TestProbe<String> stopped = kit.createTestProbe();
    watchedLeaving(master, stopped);
    JobProtocol.LeaveJob leave = master.expectMessageClass(JobProtocol.LeaveJob.class);
    assertEquals("t1", leave.trainerId());
    stopped.expectNoMessage(Duration.ofMillis(300));
    leave.replyTo().tell(StatusReply.ack());
    stopped.expectMessage("t1 stopped");
  }

  @Test
  void aLeavingTrainerStopsAnywayWhenTheMasterDoesNotAnswer() {
    kit = ActorTestKit.create();
    TestProbe<JobProtocol.Command> master = kit.createTestProbe();
    TestProbe<String> stopped = kit.createTestProbe();
    watchedLeaving(master, stopped);
    master.expectMessageClass(JobProtocol.LeaveJob.class);
    stopped.expectNoMessage(Duration.ofMillis(1500));
    stopped.expectMessage(Duration.ofSeconds(5), "t1 stopped");
  }

  /** A trainer "t1" that leaves at once through its MasterLink to {@code master}, watched by {@code stopped}. */
  private void watchedLeaving(TestProbe<JobProtocol.Command> master, TestProbe<String> stopped) {
    ActorRef<Trainer.Command> trainer = kit.spawn(Behaviors.setup(ctx -> new MasterLink(ctx, "t1", master.ref(),
        TrainerSettings.create(kit.system())).leaveAndStop()));
    kit.spawn(Behaviors.<Done>setup(ctx -> {
      ctx.watch(trainer);
      return Behaviors.receive(Done.class).onSignal(Terminated.class, t -> {
        stopped.ref().tell("t1 stopped");
        return Behaviors.same();
      }).build();
    }));
  }
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
