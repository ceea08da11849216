package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MasterTest {
  /**
   * Events and commands are checked for serialization; the state is not: the master's timers change
   * it while the test thread would serialize it (MasterSnapshotTest checks the state's snapshots).
   */
  static final EventSourcedBehaviorTestKit.SerializationSettings STATE_NOT_VERIFIED =
      EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyState(false);

  /**
   * A fresh system per test: every test's master has the same persistence id, and a master left
   * running by an earlier test (its ticks, a checkpoint in progress) would write into the next
   * test's journal.
   */
  static ActorTestKit kit;
  static final MasterSettings SETTINGS =
      new MasterSettings(Duration.ofSeconds(60), Duration.ofMillis(100), Duration.ofSeconds(1), 1000);
  static final MasterSettings IMPATIENT =
      new MasterSettings(Duration.ofMillis(400), Duration.ofMillis(100), Duration.ofSeconds(1), 1000);

  @BeforeEach
  void startKit() {
    newKit();
  }

  static void newKit() {
    MARKS.clear();
    kit = ActorTestKit.create("MasterTest",
      EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stopKit() {
    kit.shutdownTestKit();
  }

  /** 100 examples, 2 trainers: tasks [0, 50) and [50, 100), two epochs, two blocks. */
  static JobSpec job() {
    return new JobSpec("job-1", "test", 100, 4, 2, List.of(3), "relu", 7, BlockSpec.Mode.SYNC, 2, 10, 2, 0,
        "sgd", 0.1f, "constant", 0f, -1, 16, List.of("w#0", "w#1"), null);
  }

  record Setup(EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk,
      TestProbe<ShardingEnvelope<BlockProtocol.Command>> blocks) {}

  static Setup submitted() {
    return submitted(SETTINGS);
  }

  /**
   * How far each block holds a task, as "block epoch/task" -> progress; a block not listed holds
   * nothing of it, one listed with null does not answer.
   */
  static final java.util.Map<String, BlockProtocol.TaskProgress> MARKS = new java.util.concurrent.ConcurrentHashMap<>();
  static final BlockProtocol.TaskProgress SILENT = new BlockProtocol.TaskProgress(-1, -1);

  /** Blocks that acknowledge every membership update, answer task marks from {@link #MARKS}, and tell the probe what they got. */
  static akka.actor.typed.Behavior<ShardingEnvelope<BlockProtocol.Command>> ackingBlocks(
      TestProbe<ShardingEnvelope<BlockProtocol.Command>> probe) {
    return Behaviors.receiveMessage(env -> {
      if (env.message() instanceof BlockProtocol.UpdateMembership u) u.replyTo().tell(StatusReply.success(u.epoch()));
      answerMark(env);
      probe.ref().tell(env);
      return Behaviors.same();
    });
  }

  static void answerMark(ShardingEnvelope<BlockProtocol.Command> env) {
    if (!(env.message() instanceof BlockProtocol.GetTaskMark g)) return;
    BlockProtocol.TaskProgress p = MARKS.getOrDefault(env.entityId() + " " + g.epoch() + "/" + g.task(),
        new BlockProtocol.TaskProgress(0, 0));
    if (p != SILENT) g.replyTo().tell(StatusReply.success(p));
  }

  /** A submitted job whose trainers "a" and "b" hold tasks 0/0 and 0/1. */
  static Setup bothLeased() {
    Setup s = submitted();
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), request(s, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 0), request(s, "b"));
    return s;
  }

  /** Asks for a task until the departed trainer's task it waits for is settled (NoTask meanwhile). */
  static JobProtocol.TaskReply requestSettled(Setup s, String id) {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (true) {
      JobProtocol.TaskReply r = request(s, id);
      if (!(r instanceof JobProtocol.NoTask n && !n.jobDone()) || System.nanoTime() > deadline) return r;
      sleep(20);
    }
  }

  static Setup submitted(MasterSettings settings) {
    return submitted(settings, job());
  }

  static Setup submitted(MasterSettings settings, JobSpec job) {
    TestProbe<ShardingEnvelope<BlockProtocol.Command>> blocks = kit.createTestProbe();
    var acking = kit.spawn(ackingBlocks(blocks));
    EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk =
        EventSourcedBehaviorTestKit.create(kit.system(), Master.create(settings, acking), STATE_NOT_VERIFIED);
    tk.clear();
    StatusReply<Done> r = tk.<StatusReply<Done>>runCommand(replyTo -> new JobProtocol.SubmitJob(job, replyTo)).reply();
    assertTrue(r.isSuccess());
    return new Setup(tk, blocks);
  }

  static JobProtocol.Registration register(Setup s, String id, TestProbe<? super TrainerNotice> trainer) {
    return s.tk().<StatusReply<JobProtocol.Registration>>runCommand(
            r -> new JobProtocol.RegisterTrainer(id, trainer.ref().narrow(), r))
        .reply().getValue();
  }

  /** Asks for a task, again while the job waits for its trainers (block acknowledgements are asynchronous). */
  static JobProtocol.TaskReply request(Setup s, String id) {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (true) {
      JobProtocol.TaskReply r = s.tk()
          .<StatusReply<JobProtocol.TaskReply>>runCommand(x -> new JobProtocol.RequestTask(id, x))
          .reply().getValue();
      if (!(r instanceof JobProtocol.WaitForTrainers) || System.nanoTime() > deadline) return r;
      sleep(20);
    }
  }

  static StatusReply<Done> report(Setup s, String id, int epoch, int task, long offset, long step) {
    return s.tk()
        .<StatusReply<Done>>runCommand(r -> new JobProtocol.ReportProgress(id, epoch, task, offset, step, 0, r)).reply();
  }

  @Test
  void eachEpochIsCutIntoOneTaskPerTrainerAndALeaseResumesAtTheReportedOffset() {
    Setup s = submitted();
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), request(s, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 0), request(s, "b"));
    assertTrue(report(s, "a", 0, 0, 20, 2).isSuccess());
    // Asking again (e.g. after a restart) returns the same task at the reported offset.
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 20), request(s, "a"));
    assertEquals(20, s.tk().getState().status().examplesReported());
  }

  @Test
  void noTaskIsHandedOutUntilTheExpectedTrainersAreRegistered() {
    Setup s = submitted();
    register(s, "a", kit.createTestProbe());
    JobProtocol.TaskReply early = s.tk()
        .<StatusReply<JobProtocol.TaskReply>>runCommand(x -> new JobProtocol.RequestTask("a", x))
        .reply().getValue();
    assertEquals(new JobProtocol.WaitForTrainers(1, 2), early);
    register(s, "b", kit.createTestProbe());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), request(s, "a"));
    assertTrue(s.tk().getState().started());
  }

  @Test
  void progressOnATaskLeasedToAnotherTrainerOrBackwardsIsRefused() {
    Setup s = bothLeased();
    StatusReply<Done> wrong = report(s, "b", 0, 0, 10, 1);
    assertTrue(wrong.isError());
    assertTrue(wrong.getError().getMessage().contains("not leased to b"), wrong.getError().getMessage());
    report(s, "a", 0, 0, 30, 3);
    StatusReply<Done> back = report(s, "a", 0, 0, 10, 4);
    assertTrue(back.isError());
    assertTrue(back.getError().getMessage().contains("outside [30, 50]"), back.getError().getMessage());
  }

  static JobProtocol.StepOffset at(long step, long offset) {
    return new JobProtocol.StepOffset(step, offset);
  }

  @Test
  void aReportOfSeveralStepsIsOneEventAndStepsTheMasterRecordedAlreadyAreNotRecordedAgain() {
    Setup s = bothLeased();
    var first = s.tk().<StatusReply<Done>>runCommand(
        r -> new JobProtocol.ReportProgress("a", 0, 0, List.of(at(1, 10), at(2, 20), at(3, 30)), 0, r));
    assertTrue(first.reply().isSuccess());
    assertEquals(List.of(new Master.ProgressRecorded(0, 0, 30, "a", 3, List.of(at(1, 10), at(2, 20)))), first.events());
    // Sent again with step 4, as after a lost answer: only step 4 is new.
    var again = s.tk().<StatusReply<Done>>runCommand(
        r -> new JobProtocol.ReportProgress("a", 0, 0, List.of(at(1, 10), at(2, 20), at(3, 30), at(4, 40)), 0, r));
    assertTrue(again.reply().isSuccess());
    assertEquals(List.of(new Master.ProgressRecorded(0, 0, 40, "a", 4, List.of())), again.events());
    TaskState t = s.tk().getState().task(0, 0);
    assertEquals(List.of(10L, 20L, 30L, 40L), List.of(t.offsetAt(1), t.offsetAt(2), t.offsetAt(3), t.offsetAt(4)));
    assertEquals(40, s.tk().getState().status().examplesReported());
    assertEquals(4, s.tk().getState().registration("a").lastStep());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 40), request(s, "a"));
  }

  @Test
  void aReportWhoseStepsAreOutOfOrderIsRefused() {
    Setup s = bothLeased();
    for (List<JobProtocol.StepOffset> steps : List.of(List.of(at(2, 20), at(1, 30)), List.of(at(1, 20), at(2, 10)))) {
      StatusReply<Done> r = s.tk().<StatusReply<Done>>runCommand(
          x -> new JobProtocol.ReportProgress("a", 0, 0, steps, 0, x)).reply();
      assertTrue(r.isError() && r.getError().getMessage().contains("out of order"), String.valueOf(r));
    }
    assertEquals(0, s.tk().getState().status().examplesReported());
  }

  @Test
  void finishedTasksOpenTheNextEpochAndTheJobEndsAfterTheLastEpoch() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 50, 5);
    // "a" moves on to epoch 1 while "b" still finishes epoch 0.
    assertEquals(new JobProtocol.Lease(1, 0, 0, 50, 0), request(s, "a"));
    report(s, "b", 0, 1, 50, 5);
    assertEquals(1, s.tk().getState().status().epochsDone());
    assertEquals(new JobProtocol.Lease(1, 1, 50, 100, 0), request(s, "b"));
    report(s, "a", 1, 0, 50, 10);
    assertEquals(new JobProtocol.NoTask(false), request(s, "a"));
    report(s, "b", 1, 1, 50, 10);
    assertEquals(new JobProtocol.NoTask(true), request(s, "a"));
    assertTrue(s.tk().getState().done());
    assertEquals(200, s.tk().getState().status().examplesReported());
  }

  @Test
  void aTrainerWhoseActorStopsOnceTheJobIsDoneLeftTheJobAndOneThatStopsBeforeWasDropped() {
    Setup s = submitted();
    TestProbe<TrainerNotice> a = kit.createTestProbe();
    TestProbe<TrainerNotice> b = kit.createTestProbe();
    register(s, "a", a);
    register(s, "b", b);
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), request(s, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 0), request(s, "b"));
    b.stop();
    awaitMembers(s, Set.of("a"), Duration.ofSeconds(5));
    // "a" trains the rest alone; its actor stops when the job is done, before its LeaveJob arrives.
    assertTrue(report(s, "a", 0, 0, 50, 5).isSuccess());
    long step = 5;
    for (var r = requestSettled(s, "a"); r instanceof JobProtocol.Lease l; r = requestSettled(s, "a")) {
      step += 5;
      assertTrue(report(s, "a", l.epoch(), l.task(), l.to() - l.from(), step).isSuccess());
    }
    assertTrue(s.tk().getState().done());
    a.stop();
    awaitMembers(s, Set.of(), Duration.ofSeconds(5));
    // The journal is read from the test's thread: the second departure may not be listed at once.
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    List<Master.TrainerLeft> left = trainersLeft(s);
    while (left.size() < 2 && System.nanoTime() < deadline) {
      sleep(20);
      left = trainersLeft(s);
    }
    assertEquals(List.of(new Master.TrainerLeft("b", "its actor stopped"), new Master.TrainerLeft("a", "left the job")),
        left);
  }

  static List<Master.TrainerLeft> trainersLeft(Setup s) {
    return s.tk().persistenceTestKit().persistedInStorage("shardtrain-master").stream()
        .filter(Master.TrainerLeft.class::isInstance).map(Master.TrainerLeft.class::cast).toList();
  }

  /** Waits until the members are {@code members}, failing after {@code within}. */
  static void awaitMembers(Setup s, Set<String> members, Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    while (!s.tk().getState().members().keySet().equals(members)) {
      assertTrue(System.nanoTime() < deadline, "members " + s.tk().getState().members().keySet());
      sleep(20);
    }
  }

  @Test
  void aTrainerThatJoinsMidEpochTrainsTheNextEpochWhichIsCutAgainForAllTrainers() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 20, 2);
    JobProtocol.Registration c = register(s, "c", kit.createTestProbe());
    assertEquals(3, c.membershipEpoch());
    assertEquals(List.of("a", "b", "c"), c.members());
    // Nobody had started epoch 1: it is cut into three tasks and "c" trains the first one at once,
    // while the started epoch 0 keeps its two tasks and their offsets.
    assertEquals(new JobProtocol.Lease(1, 0, 0, 34, 0), request(s, "c"));
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 20), request(s, "a"));
    // Replaying the journal cuts the same ranges.
    s.tk().restart();
    assertEquals(new JobProtocol.Lease(1, 0, 0, 34, 0), request(s, "c"));
    report(s, "a", 0, 0, 50, 5);
    assertEquals(new JobProtocol.Lease(1, 1, 34, 68, 0), request(s, "a"));
    report(s, "b", 0, 1, 50, 5);
    assertEquals(new JobProtocol.Lease(1, 2, 68, 100, 0), request(s, "b"));
    report(s, "c", 1, 0, 34, 8);
    report(s, "a", 1, 1, 34, 8);
    assertEquals(new JobProtocol.NoTask(false), request(s, "c"));
    report(s, "b", 1, 2, 32, 8);
    assertEquals(new JobProtocol.NoTask(true), request(s, "c"));
    assertEquals(200, s.tk().getState().status().examplesReported());
  }

  @Test
  void aTrainerThatJoinsDuringTheLastEpochGetsNoTaskAndTheJobStillEndsAfterIt() {
    JobSpec oneEpoch = new JobSpec("job-1", "test", 100, 4, 2, List.of(3), "relu", 7, BlockSpec.Mode.SYNC, 2, 10, 1,
        0, "sgd", 0.1f, "constant", 0f, -1, 16, List.of("w#0", "w#1"), null);
    Setup s = submitted(SETTINGS, oneEpoch);
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    request(s, "a");
    request(s, "b");
    register(s, "c", kit.createTestProbe());
    // No epoch after the last one is opened for it: it takes part in the barrier without data.
    assertEquals(new JobProtocol.NoTask(false), request(s, "c"));
    report(s, "a", 0, 0, 50, 5);
    report(s, "b", 0, 1, 50, 5);
    assertEquals(new JobProtocol.NoTask(true), request(s, "c"));
  }

  @Test
  void everyMembershipChangeIsSentToEveryBlock() {
    Setup s = submitted();
    register(s, "a", kit.createTestProbe());
    Set<String> seen = new HashSet<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
    while (seen.size() < 2 && System.nanoTime() < deadline) {
      ShardingEnvelope<BlockProtocol.Command> env = s.blocks().receiveMessage(Duration.ofSeconds(3));
      if (env.message() instanceof BlockProtocol.UpdateMembership u && u.epoch() == 1) {
        assertEquals(List.of("a"), u.trainers());
        seen.add(env.entityId());
      }
    }
    assertEquals(Set.of("w#0", "w#1"), seen);
  }

  @Test
  void theStopOfAnEarlierRegistrationDoesNotDropTheTrainerThatRegisteredAgain() {
    Setup s = submitted();
    TestProbe<Object> killed = kit.createTestProbe();
    register(s, "a", killed);
    register(s, "b", kit.createTestProbe());
    // "a" restarted on a new node before the old node was removed from the cluster.
    TestProbe<Object> restarted = kit.createTestProbe();
    register(s, "a", restarted);
    killed.stop();
    sleep(1000);
    assertEquals(restarted.ref(), s.tk().getState().members().get("a"), "the old actor's stop is not the new one's");
    restarted.stop();
    // The registered actor's stop drops it.
    awaitMembers(s, Set.of("b"), Duration.ofSeconds(10));
  }

  @Test
  void aTrainerTheMasterDoesNotKnowIsToldToRegisterAgain() {
    Setup s = submitted();
    register(s, "a", kit.createTestProbe());
    assertEquals(new JobProtocol.NotRegistered(), request(s, "stranger"));
  }

  @Test
  void aSilentTrainerLeavesAfterTheFailureTimeout() {
    Setup s = submitted(IMPATIENT);
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    request(s, "a");
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (System.nanoTime() < deadline && s.tk().getState().members().size() == 2) {
      request(s, "a"); // "a" keeps reporting, "b" is silent
      sleep(100);
    }
    assertEquals(Set.of("a"), s.tk().getState().members().keySet());
  }

  @Test
  void heartbeatsKeepATrainerThatWaitsAtABarrierAMember() {
    // A timeout ten heartbeats long: a loaded machine may delay one beat, not ten.
    Setup s = submitted(new MasterSettings(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(1), 1000));
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    request(s, "a");
    // Three failure timeouts in which "b" reports nothing (it waits for a pull) but sends heartbeats.
    for (int i = 0; i < 30; i++) {
      request(s, "a");
      s.tk().runCommand(new JobProtocol.Heartbeat("b"));
      sleep(100);
    }
    assertEquals(Set.of("a", "b"), s.tk().getState().members().keySet());
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (System.nanoTime() < deadline && s.tk().getState().members().size() == 2) {
      request(s, "a");
      sleep(100);
    }
    assertEquals(Set.of("a"), s.tk().getState().members().keySet());
  }

  @Test
  void aTrainerJoiningARunningJobGetsATaskOnlyOnceEveryBlockKnowsIt() {
    TestProbe<ShardingEnvelope<BlockProtocol.Command>> probe = kit.createTestProbe();
    java.util.concurrent.atomic.AtomicBoolean acking = new java.util.concurrent.atomic.AtomicBoolean(true);
    var blocks = kit.spawn(Behaviors.<ShardingEnvelope<BlockProtocol.Command>>receiveMessage(env -> {
      if (env.message() instanceof BlockProtocol.UpdateMembership u && acking.get()) {
        u.replyTo().tell(StatusReply.success(u.epoch()));
      }
      answerMark(env);
      return Behaviors.same();
    }));
    EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk =
        EventSourcedBehaviorTestKit.create(kit.system(), Master.create(SETTINGS, blocks), STATE_NOT_VERIFIED);
    tk.clear();
    assertTrue(tk.<StatusReply<Done>>runCommand(r -> new JobProtocol.SubmitJob(job(), r)).reply().isSuccess());
    Setup s = new Setup(tk, probe);
    register(s, "a", kit.createTestProbe());
    register(s, "b", kit.createTestProbe());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), request(s, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 0), request(s, "b"));
    assertTrue(report(s, "b", 0, 1, 30, 3).isSuccess());
    tk.<StatusReply<Done>>runCommand(r -> new JobProtocol.LeaveJob("b", r));

    acking.set(false);
    register(s, "b", kit.createTestProbe());
    for (int i = 0; i < 5; i++) {
      JobProtocol.TaskReply early = tk
          .<StatusReply<JobProtocol.TaskReply>>runCommand(x -> new JobProtocol.RequestTask("b", x))
          .reply().getValue();
      assertEquals(new JobProtocol.WaitForTrainers(2, 2), early);
      sleep(100);
    }
    // b's task settled with the blocks before b may ask again; else the master rightly leases it the next free task.
    long settleBy = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!tk.getState().settling().isEmpty() && System.nanoTime() < settleBy) sleep(20);
    acking.set(true);
    // Re-sent on the next tick and acknowledged: "b" gets its old task back where it reported.
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 30), requestSettled(s, "b"));
  }

  @Test
  void aStoppedTrainerActorLeavesTheMembership() {
    Setup s = submitted();
    TestProbe<Object> a = kit.createTestProbe();
    register(s, "a", a);
    a.stop();
    awaitMembers(s, Set.of(), Duration.ofSeconds(3));
    assertEquals(2, s.tk().getState().membershipEpoch());
  }

  @Test
  void recoveryRebuildsTasksOffsetsAndMembership() {
    Setup s = bothLeased();
    report(s, "a", 0, 0, 50, 5);
    request(s, "a");
    report(s, "a", 1, 0, 20, 7);
    JobProtocol.JobStatus before = s.tk().getState().status();
    s.tk().restart();
    JobProtocol.JobStatus after = s.tk().getState().status();
    assertEquals(before, after);
    assertEquals(new JobProtocol.Lease(1, 0, 0, 50, 20), request(s, "a"));
    assertEquals(7, register(s, "a2", kit.createTestProbe()).lastStep() + 7);
    assertFalse(after.done());
  }

  @Test
  void aSecondJobIsRefusedWhileOneRuns() {
    Setup s = submitted();
    JobSpec other = new JobSpec("job-2", "test", 100, 4, 2, List.of(3), "relu", 7, BlockSpec.Mode.SYNC, 2, 10, 2,
        0, "sgd", 0.1f, "constant", 0f, -1, 16, List.of("w#0"), null);
    StatusReply<Done> r =
        s.tk().<StatusReply<Done>>runCommand(replyTo -> new JobProtocol.SubmitJob(other, replyTo)).reply();
    assertTrue(r.isError());
    assertTrue(r.getError().getMessage().contains("job-1"), r.getError().getMessage());
    assertTrue(
        s.tk().<StatusReply<Done>>runCommand(replyTo -> new JobProtocol.SubmitJob(job(), replyTo)).reply().isSuccess());
  }

  @Test
  void aMasterTakesItsOwnJobOnlyEvenAfterItFinished() {
    Setup s = bothLeased();
    for (int epoch = 0; epoch < 2; epoch++) {
      report(s, "a", epoch, 0, 50, 10L * epoch + 5);
      report(s, "b", epoch, 1, 50, 10L * epoch + 5);
      if (epoch == 0) {
        assertEquals(new JobProtocol.Lease(1, 0, 0, 50, 0), request(s, "a"));
        assertEquals(new JobProtocol.Lease(1, 1, 50, 100, 0), request(s, "b"));
      }
    }
    assertTrue(s.tk().getState().done());
    JobSpec other = new JobSpec("job-2", "test", 100, 4, 2, List.of(3), "relu", 7, BlockSpec.Mode.SYNC, 2, 10, 2,
        0, "sgd", 0.1f, "constant", 0f, -1, 16, List.of("w#0"), null);
    StatusReply<Done> r =
        s.tk().<StatusReply<Done>>runCommand(replyTo -> new JobProtocol.SubmitJob(other, replyTo)).reply();
    assertTrue(r.isError());
    String message = r.getError().getMessage();
    assertEquals("this master runs job 'job-1'; 'job-2' was not started", message);
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
