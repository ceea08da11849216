package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.LoggingTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.Contributor;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.GA;
import static io.shardtrain.actors.ps.BlockTestSupport.GB;
import static io.shardtrain.actors.ps.BlockTestSupport.INIT;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.assertSameState;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.membership;
import static io.shardtrain.actors.ps.BlockTestSupport.push;
import static io.shardtrain.actors.ps.BlockTestSupport.send;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static io.shardtrain.actors.ps.BlockTestSupport.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ParameterBlockSyncTest {
  private static ActorTestKit kit;


  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockSyncTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static BlockSpec adamSpec() {
    return new BlockSpec(BlockTestSupport.freshParameter(), 0, 0, INIT.length,
        OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM), "step:1:0.5", 0.01f, BlockSpec.Mode.SYNC, -1);
  }

  private static EventSourcedBehaviorTestKit<Command, Event, BlockState> started(BlockSpec spec, PsSettings s,
      String... trainers) {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, s);
    assertEquals(0L, init(tk, spec, INIT).getValue());
    assertEquals(1L, membership(tk, 1, trainers).getValue());
    return tk;
  }

  /** sum(w_i g_i) / sum(w_i) in arrival order, the way the block computes it. */
  private static float[] weightedMean(float[] wts, float[]... grads) {
    float[] mean = new float[grads[0].length];
    float total = 0f;
    for (int i = 0; i < grads.length; i++) {
      total += wts[i];
      for (int j = 0; j < mean.length; j++) mean[j] += wts[i] * grads[i][j];
    }
    for (int j = 0; j < mean.length; j++) mean[j] /= total;
    return mean;
  }

  @Test
  void barrierOfTwoTrainersAppliesTheirWeightedMeanOnceBothPushed() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");

    // The first push is held in memory, journaled as part of its step, and answered with it.
    TestProbe<StatusReply<PushAck>> first = kit.createTestProbe();
    var held = tk.runCommand(new BlockProtocol.PushGradient("a", 1, 0, 1, 3f, GA.clone(), first.ref()));
    assertTrue(held.hasNoEvents());
    first.expectNoMessage(Duration.ofMillis(50));
    assertBitsEqual(INIT, held.state().values(), "values before the barrier");

    EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, StatusReply<PushAck>> second =
        tk.runCommand(r -> new BlockProtocol.PushGradient("b", 1, 0, 1, 1f, GB.clone(), r));
    assertEquals(new Applied(1), second.reply().getValue());
    assertEquals(new Accepted(1), first.receiveMessage().getValue());
    // One event for the step, holding the mean it applied.
    assertEquals(1, second.events().size());
    StepCommitted committed = (StepCommitted) second.events().get(0);
    assertEquals(1, committed.step());
    assertEquals(4, committed.examples());
    assertEquals(List.of("a", "b"), committed.contributors().stream().map(Contributor::trainerId).toList());
    assertBitsEqual(weightedMean(new float[] {3f, 1f}, GA, GB), committed.mean(), "the journaled mean");

    Optimizer adam = spec.optimizer().create();
    LearningRateSchedule schedule = spec.schedule();
    OptimizerState expectedState = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    expectedState.step(adam, schedule, expected, weightedMean(new float[] {3f, 1f}, GA, GB));
    assertBitsEqual(expected, second.state().values(), "values after step 1");

    // Step 2 in the other arrival order: slots and the halved rate carry over.
    TestProbe<StatusReply<PushAck>> b2 = send(kit, tk, "b", 2, 1, 2f, GA);
    assertEquals(new Applied(2), push(tk, "a", 2, 1, 5f, GB).getValue());
    assertEquals(new Accepted(2), b2.receiveMessage().getValue());
    expectedState.step(adam, schedule, expected, weightedMean(new float[] {2f, 5f}, GA, GB));
    BlockState state = tk.getState();
    assertBitsEqual(expected, state.values(), "values after step 2");
    for (int s = 0; s < adam.slotCount(); s++) {
      assertBitsEqual(expectedState.slots()[s], state.slots()[s], "slot " + s);
    }
    assertEquals(2, state.version());
    assertEquals(2, state.updates());
    // Examples behind the applied steps: (3 + 1) + (2 + 5).
    assertEquals(11, state.examplesApplied());
    assertEquals(11, stats(tk).examplesApplied());
  }

  @Test
  void emptyZeroWeightPushTakesPartInTheBarrierWithoutChangingTheMean() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    TestProbe<StatusReply<PushAck>> a = send(kit, tk, "a", 1, 0, 4f, GA);
    // "b" has no data for step 1: an empty push of weight 0 completes the barrier.
    assertEquals(new Applied(1),
        tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 1, 0, 1, 0f, new float[0], r))
            .reply().getValue());
    Optimizer adam = spec.optimizer().create();
    OptimizerState expectedState = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    expectedState.step(adam, spec.schedule(), expected, weightedMean(new float[] {4f}, GA));
    assertBitsEqual(expected, tk.getState().values(), "values after a step with one idle trainer");
    assertEquals(new Accepted(1), a.receiveMessage().getValue());
    // Both idle: the version advances, the optimizer does not run.
    send(kit, tk, "a", 2, 1, 0f, new float[0]);
    push(tk, "b", 2, 1, 0f, new float[0]);
    assertEquals(2, tk.getState().version());
    assertEquals(1, tk.getState().updates());
    assertBitsEqual(expected, tk.getState().values(), "values after an all-idle step");
  }

  @Test
  void duplicatePushIsAcknowledgedAndNotAppliedAgain() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    TestProbe<StatusReply<PushAck>> first = send(kit, tk, "a", 1, 0, 1f, GA);
    // A retry of the pending contribution, with other numbers even: nothing is recorded, and it is
    // answered, as the first was, once the step is applied.
    TestProbe<StatusReply<PushAck>> retry = kit.createTestProbe();
    assertTrue(tk.runCommand(new BlockProtocol.PushGradient("a", 1, 0, 1, 1f, GB, retry.ref())).hasNoEvents());
    retry.expectNoMessage(Duration.ofMillis(50));
    assertEquals(new Applied(1), push(tk, "b", 1, 0, 1f, GB).getValue());
    assertEquals(new Accepted(1), first.receiveMessage().getValue());
    assertEquals(new Duplicate(1), retry.receiveMessage().getValue());
    float[] after = tk.getState().values();

    var late = tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 1, 0, 1, 1f, GA, r));
    assertEquals(new Duplicate(1), late.reply().getValue());
    assertTrue(late.hasNoEvents());
    assertBitsEqual(after, tk.getState().values(), "values");
    assertEquals(2, stats(tk).duplicates());
  }

  @Test
  void pushAheadOfTheNextStepIsRejectedNamingStepAndVersion() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(adamSpec(), settings(), "a");
    var ahead = tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("a", 3, 0, 1, 1f, GA, r));
    assertTrue(ahead.reply().isError());
    String msg = ahead.reply().getError().getMessage();
    assertTrue(msg.contains("step 3") && msg.contains("version 0"), msg);
    assertTrue(ahead.hasNoEvents());
    assertEquals(1, stats(tk).rejectedAhead());
  }

  @Test
  void membershipShrinkReleasesAWaitingBarrierAndStatsNameTheMissingTrainer() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    TestProbe<StatusReply<PushAck>> a = send(kit, tk, "a", 1, 0, 4f, GA);
    BlockStats waiting = stats(tk);
    assertEquals(1, waiting.pendingStep());
    assertEquals(List.of("b"), waiting.waitingFor());
    assertEquals(1, waiting.membershipEpoch());

    var shrink = tk.<StatusReply<Long>>runCommand(r -> new BlockProtocol.UpdateMembership(2, List.of("a"), r));
    assertEquals(2L, shrink.reply().getValue());
    assertEquals(2, shrink.events().size());
    assertEquals(new MembershipUpdated(2, List.of("a")), shrink.events().get(0));
    assertEquals(1, ((StepCommitted) shrink.events().get(1)).step());
    assertEquals(new Accepted(1), a.receiveMessage().getValue());
    Optimizer adam = spec.optimizer().create();
    OptimizerState expectedState = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    expectedState.step(adam, spec.schedule(), expected, weightedMean(new float[] {4f}, GA));
    assertBitsEqual(expected, shrink.state().values(), "values");

    BlockStats after = stats(tk);
    assertEquals(1, after.version());
    // Only the examples of the trainer that pushed count: "b" contributed nothing to step 1.
    assertEquals(4, after.examplesApplied());
    assertEquals(-1, after.pendingStep());
    assertEquals(List.of(), after.waitingFor());
    // An older epoch arriving late changes nothing and is answered with the epoch in force.
    var old = tk.<StatusReply<Long>>runCommand(r -> new BlockProtocol.UpdateMembership(1, List.of("a", "b"), r));
    assertEquals(2L, old.reply().getValue());
    assertTrue(old.hasNoEvents());
  }

  @Test
  void barrierThatWaitsTooLongLogsTheTrainersItWaitsFor() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(adamSpec(), settings(), "a", "b", "c");
    LoggingTestKit.warn("missing trainers [b, c]").expect(kit.system(), () -> send(kit, tk, "a", 1, 0, 1f, GA));
  }

  @Test
  void pullWaitsUntilTheVersionExistsThenAnswers() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    TestProbe<StatusReply<BlockValues>> probe = kit.createTestProbe();
    tk.runCommand(new Pull(1, probe.ref()));
    probe.expectNoMessage(Duration.ofMillis(100));
    assertEquals(1, stats(tk).pendingPulls());
    send(kit, tk, "a", 1, 0, 1f, GA);
    probe.expectNoMessage(Duration.ofMillis(50));
    push(tk, "b", 1, 0, 1f, GB);
    BlockValues values = probe.receiveMessage(Duration.ofSeconds(3)).getValue();
    assertEquals(1, values.version());
    assertEquals(spec.parameter(), values.parameter());
    assertBitsEqual(tk.getState().values(), values.values(), "pulled values");

    // A version already there is answered at once.
    BlockValues now = tk.<StatusReply<BlockValues>>runCommand(r -> new Pull(0, r)).reply().getValue();
    assertEquals(1, now.version());
  }

  @Test
  void pullForAVersionThatNeverComesFailsAfterThePullTimeout() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        started(adamSpec(), settings(100, Duration.ofMillis(300), PsSettings.NonFinitePolicy.REJECT), "a");
    TestProbe<StatusReply<BlockValues>> probe = kit.createTestProbe();
    tk.runCommand(new Pull(5, probe.ref()));
    probe.expectNoMessage(Duration.ofMillis(150));
    StatusReply<BlockValues> reply = probe.receiveMessage(Duration.ofSeconds(3));
    assertTrue(reply.isError());
    String msg = reply.getError().getMessage();
    assertTrue(msg.contains("version 5") && msg.contains("300 ms") && msg.contains("at version 0"), msg);
    BlockStats s = stats(tk);
    assertEquals(1, s.pullTimeouts());
    assertEquals(0, s.pendingPulls());
  }

  @Test
  void badInputGetsAnErrorNamingTheProblemAndChangesNothing() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> fresh = block(kit, spec, settings());
    assertError(fresh.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("a", 1, 0, 1, 1f, GA, r)), "not initialised");
    assertError(fresh.<StatusReply<BlockValues>>runCommand(r -> new Pull(0, r)), "not initialised");
    assertError(fresh.<StatusReply<Long>>runCommand(r -> new Initialize(spec, new float[3], r)), "3 values", "length 5");
    BlockSpec other = new BlockSpec(spec.parameter(), 1, 5, 5, spec.optimizer(), "constant", 0.1f, BlockSpec.Mode.SYNC, -1);
    assertError(fresh.<StatusReply<Long>>runCommand(r -> new Initialize(other, INIT, r)), spec.parameter() + "#1", spec.entityId());
    assertEquals(2, stats(fresh).rejectedNotInitialised());

    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    send(kit, tk, "a", 1, 0, 1f, GA);
    push(tk, "b", 1, 0, 1f, GB);
    send(kit, tk, "a", 2, 1, 1f, GB);
    BlockState before = tk.getState().copy();

    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 2, 1, 1, 1f, new float[3], r)),
        "length 3", "length 5");
    float[] nan = GB.clone();
    nan[2] = Float.NaN;
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 2, 1, 1, 1f, nan, r)), "non-finite", "index 2");
    float[] inf = GB.clone();
    inf[4] = Float.NEGATIVE_INFINITY;
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 2, 1, 1, 1f, inf, r)), "index 4");
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 2, 1, 1, 0f, GB, r)), "weight");
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 0, 1, 1, 1f, GB, r)), "step must be >= 1");
    BlockSpec sgd = new BlockSpec(spec.parameter(), 0, 0, 5, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD),
        "constant", 0.1f, BlockSpec.Mode.SYNC, -1);
    // Only what differs is named, nested records by their components.
    assertError(tk.<StatusReply<Long>>runCommand(r -> new Initialize(sgd, INIT, r)),
        "is already initialised with another job description: optimizer.kind ADAM, not SGD;",
        "lrSchedule step:1:0.5, not constant; lr 0.01, not 0.1 (a job id keeps its description");
    // The same spec again (a restarted job) is acknowledged with the version; the values stay.
    var again = tk.<StatusReply<Long>>runCommand(r -> new Initialize(spec, new float[] {9f, 9f, 9f, 9f, 9f}, r));
    assertEquals(1L, again.reply().getValue());
    assertTrue(again.hasNoEvents());

    assertSameState(before, tk.getState());
    BlockStats s = stats(tk);
    assertEquals(1, s.rejectedBadLength());
    assertEquals(2, s.rejectedNonFinite());
    assertEquals(2, s.rejectedMalformed());
    assertEquals(List.of("b"), s.waitingFor());
  }

  @Test
  void theStatsKeepTheLastErrorTheBlockAnsweredWithAndWhen() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    assertEquals("", stats(tk).lastError());
    assertEquals(0, stats(tk).lastErrorAtMillis());
    long before = System.currentTimeMillis();
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 1, 0, 1, 1f, new float[3], r)),
        "length 3");
    BlockStats s = stats(tk);
    assertEquals("gradient of length 3 from trainer b does not match block " + spec.entityId() + " of length 5",
        s.lastError());
    assertTrue(s.lastErrorAtMillis() >= before && s.lastErrorAtMillis() <= System.currentTimeMillis(),
        s.lastErrorAtMillis() + " not in [" + before + ", now]");
    assertError(tk.<StatusReply<PushAck>>runCommand(r -> new BlockProtocol.PushGradient("b", 5, 0, 1, 1f, GB, r)),
        "ahead");
    assertTrue(stats(tk).lastError().startsWith("push of trainer b for step 5 is ahead of block"), stats(tk).lastError());
    // An accepted push leaves the last error as it was.
    send(kit, tk, "b", 1, 0, 1f, GB);
    assertTrue(stats(tk).lastError().contains("step 5 is ahead"), stats(tk).lastError());
  }

  @Test
  void nonFiniteGradientUnderSkipPolicyIsCountedNotAppliedAndDoesNotHoldTheBarrier() {
    BlockSpec spec = adamSpec();
    PsSettings skip = settings(100, Duration.ofSeconds(5), PsSettings.NonFinitePolicy.SKIP);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, skip, "a", "b");
    float[] nan = GA.clone();
    nan[0] = Float.NaN;
    TestProbe<StatusReply<PushAck>> skippedAck = kit.createTestProbe();
    var skipped = tk.runCommand(new BlockProtocol.PushGradient("a", 1, 0, 1, 1f, nan, skippedAck.ref()));
    assertTrue(skipped.hasNoEvents());
    assertBitsEqual(INIT, skipped.state().values(), "values after the skip");

    assertEquals(new Applied(1), push(tk, "b", 1, 0, 2f, GB).getValue());
    assertEquals(new Skipped(1), skippedAck.receiveMessage().getValue());
    Optimizer adam = spec.optimizer().create();
    OptimizerState expectedState = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    expectedState.step(adam, spec.schedule(), expected, weightedMean(new float[] {2f}, GB));
    assertBitsEqual(expected, tk.getState().values(), "values");
    assertEquals(1, stats(tk).skippedNonFinite());
    assertEquals(0, stats(tk).rejectedNonFinite());
  }

  @Test
  void restartRecoversBitIdenticalStateOfTheAppliedStepsAndAnUnacknowledgedPushIsTakenAgain() {
    BlockSpec spec = adamSpec();
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings(), "a", "b");
    for (int step = 1; step <= 3; step++) {
      send(kit, tk, "a", step, step - 1, 1f + step, GA);
      push(tk, "b", step, step - 1, 2f, GB);
    }
    BlockState before = tk.getState().copy();
    TestProbe<StatusReply<PushAck>> unanswered = send(kit, tk, "b", 4, 3, 3f, GA);
    BlockState recovered = tk.restart().state();
    assertSameState(before, recovered);
    // b's push for step 4 was never acknowledged, so it was not journaled; b sends it again.
    assertEquals(0, recovered.pending().size());
    unanswered.expectNoMessage(Duration.ofMillis(50));
    TestProbe<StatusReply<PushAck>> again = send(kit, tk, "b", 4, 3, 3f, GA);
    assertEquals(new Applied(4), push(tk, "a", 4, 3, 1f, GB).getValue());
    assertEquals(new Accepted(4), again.receiveMessage().getValue());
    Optimizer adam = spec.optimizer().create();
    OptimizerState expectedState = OptimizerState.of(INIT.length, before.slots(), before.updates());
    float[] expected = before.values();
    expectedState.step(adam, spec.schedule(), expected, weightedMean(new float[] {3f, 1f}, GA, GB));
    assertBitsEqual(expected, tk.getState().values(), "values after the recovered barrier");
  }

  @Test
  void handOffTellsWaitingPullsToAskAgainAndTheBlockOnItsNewNodeKeepsThePendingBarrier() {
    BlockSpec spec = adamSpec();
    ActorRef<Command> old = kit.spawn(ParameterBlock.create(spec.entityId(), settings()));
    TestProbe<StatusReply<Long>> longs = kit.createTestProbe();
    old.tell(new Initialize(spec, INIT, longs.ref()));
    assertEquals(0L, longs.receiveMessage().getValue());
    old.tell(new UpdateMembership(1, List.of("a", "b"), longs.ref()));
    assertEquals(1L, longs.receiveMessage().getValue());
    TestProbe<StatusReply<PushAck>> acks = kit.createTestProbe();
    old.tell(new PushGradient("a", 1, 0, 1, 1f, GA, acks.ref()));
    acks.expectNoMessage(Duration.ofMillis(100));
    TestProbe<StatusReply<BlockValues>> pulls = kit.createTestProbe();
    old.tell(new Pull(1, pulls.ref()));
    pulls.expectNoMessage(Duration.ofMillis(100));

    old.tell(BlockProtocol.HandOff.INSTANCE);
    StatusReply<BlockValues> told = pulls.receiveMessage(Duration.ofSeconds(3));
    assertTrue(told.isError());
    String msg = told.getError().getMessage();
    assertTrue(msg.contains("moving to another node") && msg.contains("pull version 1 again"), msg);
    // Moving, it journals the contribution it held and acknowledges it.
    assertEquals(new Accepted(0), acks.receiveMessage(Duration.ofSeconds(3)).getValue());
    pulls.expectTerminated(old, Duration.ofSeconds(3));

    // Sharding starts it on the new node from the journal: a's acknowledged push is still there.
    ActorRef<Command> moved = kit.spawn(ParameterBlock.create(spec.entityId(), settings()));
    moved.tell(new Pull(1, pulls.ref()));
    moved.tell(new PushGradient("a", 1, 0, 1, 1f, GA, acks.ref()));
    acks.expectNoMessage(Duration.ofMillis(100));
    moved.tell(new PushGradient("b", 1, 0, 1, 1f, GB, acks.ref()));
    assertEquals(new Duplicate(1), acks.receiveMessage().getValue());
    assertEquals(new Applied(1), acks.receiveMessage().getValue());
    BlockValues after = pulls.receiveMessage(Duration.ofSeconds(3)).getValue();
    assertEquals(1, after.version());
    Optimizer adam = spec.optimizer().create();
    float[] expected = INIT.clone();
    OptimizerState.create(adam, INIT.length).step(adam, spec.schedule(), expected,
        weightedMean(new float[] {1f, 1f}, GA, GB));
    assertBitsEqual(expected, after.values(), "values after the barrier completed on the new node");
  }

  @Test
  void snapshotsBoundReplayToSnapshotEveryEvents() {
    BlockSpec spec = adamSpec();
    PsSettings every5 = settings(5, Duration.ofSeconds(5), PsSettings.NonFinitePolicy.REJECT);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, every5, "a", "b");
    for (int step = 1; step <= 19; step++) {
      send(kit, tk, "a", step, step - 1, 1f, GA);
      push(tk, "b", step, step - 1, 1f, GB);
    }
    // Initialisation, membership and one event per step: 2 + 19 = 21 events.
    BlockState before = tk.getState().copy();
    String pid = "ParameterBlock|" + spec.entityId();
    // Snapshots are saved asynchronously; the in-memory store has been seen to lose the newest one
    // now and then (apparently racing with the deletion of old ones), so wait briefly for it and
    // then check replay against whatever snapshot recovery really starts from.
    long[] newest = new long[1];
    try {
      kit.createTestProbe().awaitAssert(Duration.ofSeconds(1), () -> {
        newest[0] = newestSnapshot(tk, pid);
        assertEquals(20L, newest[0]);
        return null;
      });
    } catch (AssertionError lostOrLate) {
      newest[0] = newestSnapshot(tk, pid);
    }
    assertTrue(newest[0] >= 15, "newest snapshot at " + newest[0]);
    BlockState recovered = tk.restart().state();
    assertSameState(before, recovered);
    long replayed = stats(tk).eventsReplayed();
    assertEquals(21 - newest[0], replayed, "events replayed on top of the snapshot at " + newest[0]);
    if (newest[0] == 20) assertTrue(replayed <= 5, "replayed " + replayed + " events");
    // Old events are deleted asynchronously behind the older of the two snapshots kept: at most
    // 3 x snapshot-every + 1 of the 21 events stay (16 when the newest snapshot is the one at 15).
    kit.createTestProbe().awaitAssert(Duration.ofSeconds(5), () -> {
      int kept = tk.persistenceTestKit().persistedInStorage(pid).size();
      assertTrue(kept <= 16, "journal still holds " + kept + " events");
      return null;
    });
  }

  private static long newestSnapshot(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, String pid) {
    return tk.snapshotTestKit().get().persistedInStorage(pid).stream()
        .mapToLong(p -> p.first().sequenceNr()).max().orElse(0);
  }

  private static void assertError(EventSourcedBehaviorTestKit.CommandResultWithReply<Command, Event, BlockState, ?> result,
      String... parts) {
    Object reply = result.reply();
    assertTrue(reply instanceof StatusReply<?> s && s.isError(), "expected an error reply, got " + reply);
    String msg = ((StatusReply<?>) reply).getError().getMessage();
    for (String p : parts) assertTrue(msg.contains(p), "'" + msg + "' should name '" + p + "'");
    assertTrue(result.hasNoEvents(), "a rejected command persisted " + result.events());
  }
}
