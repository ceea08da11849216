package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.ProcessingSuccess$;
import akka.persistence.testkit.WriteEvents;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import akka.persistence.testkit.javadsl.PersistenceTestKit;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
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
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static io.shardtrain.actors.ps.BlockTestSupport.assertBitsEqual;
import static io.shardtrain.actors.ps.BlockTestSupport.assertSameState;
import static io.shardtrain.actors.ps.BlockTestSupport.block;
import static io.shardtrain.actors.ps.BlockTestSupport.init;
import static io.shardtrain.actors.ps.BlockTestSupport.push;
import static io.shardtrain.actors.ps.BlockTestSupport.settings;
import static io.shardtrain.actors.ps.BlockTestSupport.stats;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ParameterBlockAsyncTest {
  private static ActorTestKit kit;

  private static final float[] INIT = {0.5f, -1.25f, 2f, 0.125f};
  private static final float[] GA = {0.1f, -0.2f, 0.3f, 0.05f};
  private static final float[] GB = {-0.4f, 0.25f, 0.7f, -0.9f};

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("ParameterBlockAsyncTest", BlockTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static BlockSpec spec(OptimizerSpec.Kind kind, String schedule, float lr, long maxStaleness) {
    return new BlockSpec(BlockTestSupport.freshParameter(), 0, 0, INIT.length, OptimizerSpec.defaults(kind), schedule,
        lr, BlockSpec.Mode.ASYNC, maxStaleness);
  }

  private static EventSourcedBehaviorTestKit<Command, Event, BlockState> started(BlockSpec spec, PsSettings s) {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = block(kit, spec, s);
    assertEquals(0L, init(tk, spec, INIT).getValue());
    return tk;
  }

  /** Copy-on-write: pulls share the version's array instead of copying it, so no update may touch it. */
  @Test
  void valuesPulledAtAVersionStayUnchangedWhenTheNextGradientIsApplied() {
    BlockSpec spec = spec(OptimizerSpec.Kind.MOMENTUM, "constant", 0.1f, -1);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings());
    assertEquals(new Applied(1), push(tk, "a", 1, 0, 1f, GA).getValue());
    float[] atOne = tk.<StatusReply<BlockValues>>runCommand(r -> new Pull(1, r)).reply().getValue().values();
    float[] expectedAtOne = atOne.clone();
    assertEquals(new Applied(2), push(tk, "a", 2, 1, 1f, GB).getValue());
    assertBitsEqual(expectedAtOne, atOne, "values pulled at version 1");
    BlockValues atTwo = tk.<StatusReply<BlockValues>>runCommand(r -> new Pull(2, r)).reply().getValue();
    assertEquals(2, atTwo.version());
    for (int i = 0; i < INIT.length; i++) {
      assertTrue(atTwo.values()[i] != atOne[i], "value " + i + " did not move at version 2");
    }
  }

  @Test
  void eachPushIsAppliedAtOnceInArrivalOrder() {
    BlockSpec spec = spec(OptimizerSpec.Kind.ADAM, "constant", 0.01f, -1);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings());
    var first = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 1, 0, 1, 1f, GA, r));
    assertEquals(new Applied(1), first.reply().getValue());
    assertEquals(1, first.events().size());
    assertTrue(first.events().get(0) instanceof GradientApplied g && g.trainerId().equals("a") && g.step() == 1);
    assertEquals(new Applied(2), push(tk, "b", 1, 0, 1f, GB).getValue());
    assertEquals(new Applied(3), push(tk, "a", 2, 1, 1f, GB).getValue());

    Optimizer adam = spec.optimizer().create();
    OptimizerState st = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    st.step(adam, spec.schedule(), expected, GA);
    st.step(adam, spec.schedule(), expected, GB);
    st.step(adam, spec.schedule(), expected, GB);
    BlockState state = tk.getState();
    assertBitsEqual(expected, state.values(), "values");
    for (int s = 0; s < adam.slotCount(); s++) assertBitsEqual(st.slots()[s], state.slots()[s], "slot " + s);
    assertEquals(3, state.version());
    assertEquals(3, state.updates());
  }

  @Test
  void repeatedTrainerStepIsAcknowledgedAsDuplicateAndNotApplied() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        started(spec(OptimizerSpec.Kind.SGD, "constant", 0.1f, -1), settings());
    push(tk, "a", 1, 0, 1f, GA);
    push(tk, "a", 2, 1, 1f, GA);
    float[] before = tk.getState().values();
    var again = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 1, 0, 1, 1f, GB, r));
    assertEquals(new Duplicate(2), again.reply().getValue());
    assertTrue(again.hasNoEvents());
    assertBitsEqual(before, tk.getState().values(), "values");
    // Another trainer's step 1 is new.
    assertEquals(new Applied(3), push(tk, "b", 1, 2, 1f, GB).getValue());
    assertEquals(1, stats(tk).duplicates());
  }

  @Test
  void pushOverTheStalenessBoundIsRefusedWithTheCurrentVersion() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        started(spec(OptimizerSpec.Kind.SGD, "constant", 0.1f, 1), settings());
    push(tk, "a", 1, 0, 1f, GA);
    push(tk, "a", 2, 1, 1f, GA);
    push(tk, "a", 3, 2, 1f, GA);
    float[] before = tk.getState().values();
    // Version 3, base 1: two versions behind, the bound is one.
    var stale = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("b", 1, 1, 1, 1f, GB, r));
    assertEquals(new Stale(3), stale.reply().getValue());
    assertTrue(stale.hasNoEvents());
    assertBitsEqual(before, tk.getState().values(), "values after a stale push");
    assertEquals(new Applied(4), push(tk, "b", 1, 2, 1f, GB).getValue());
    BlockStats s = stats(tk);
    assertEquals(1, s.rejectedStale());
    assertEquals(4, s.version());
    // A base version the block never had is bad input.
    var future = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("c", 1, 9, 1, 1f, GB, r));
    assertTrue(future.reply().isError());
    assertTrue(future.reply().getError().getMessage().contains("base version 9"), future.reply().getError().getMessage());
  }

  @Test
  void learningRateScheduleRunsOnTheBlockUpdateCount() {
    // lr 0.5 for updates 0 and 1, 0.25 for 2 and 3, 0.125 for 4: plain SGD on a gradient of ones.
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk =
        started(spec(OptimizerSpec.Kind.SGD, "step:2:0.5", 0.5f, -1), settings());
    float[] ones = {1f, 1f, 1f, 1f};
    float[] rates = {0.5f, 0.5f, 0.25f, 0.25f, 0.125f};
    float[] expected = INIT.clone();
    for (int u = 0; u < rates.length; u++) {
      // Five trainers, one push each: the schedule follows the block's count, not the trainers' steps.
      assertEquals(new Applied(u + 1), push(tk, "t" + u, 1, u, 1f, ones).getValue());
      for (int j = 0; j < expected.length; j++) expected[j] -= rates[u];
      float[] actual = tk.getState().values();
      for (int j = 0; j < expected.length; j++) assertEquals(expected[j], actual[j], 1e-7f, "update " + u + " [" + j + "]");
    }
    assertEquals(5, tk.getState().updates());
  }

  @Test
  void nonFiniteGradientUnderSkipPolicyIsCountedAndNotApplied() {
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec(OptimizerSpec.Kind.SGD, "constant", 0.1f, -1),
        settings(100, Duration.ofSeconds(5), PsSettings.NonFinitePolicy.SKIP));
    push(tk, "a", 1, 0, 1f, GA);
    BlockState before = tk.getState().copy();
    float[] inf = GB.clone();
    inf[3] = Float.POSITIVE_INFINITY;
    var skipped = tk.<StatusReply<PushAck>>runCommand(r -> new PushGradient("a", 2, 1, 1, 1f, inf, r));
    assertEquals(new Skipped(1), skipped.reply().getValue());
    assertTrue(skipped.hasNoEvents());
    assertSameState(before, tk.getState());
    BlockStats s = stats(tk);
    assertEquals(1, s.skippedNonFinite());
    assertEquals(0, s.rejectedNonFinite());
  }

  @Test
  void pullIsAnsweredWhenAnAsyncPushReachesItsVersion() {
    BlockSpec spec = spec(OptimizerSpec.Kind.SGD, "constant", 0.1f, -1);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, settings());
    TestProbe<StatusReply<BlockValues>> probe = kit.createTestProbe();
    tk.runCommand(new Pull(2, probe.ref()));
    push(tk, "a", 1, 0, 1f, GA);
    probe.expectNoMessage(Duration.ofMillis(100));
    push(tk, "b", 1, 1, 1f, GB);
    BlockValues v = probe.receiveMessage(Duration.ofSeconds(3)).getValue();
    assertEquals(2, v.version());
    assertBitsEqual(tk.getState().values(), v.values(), "pulled values");
  }

  @Test
  void restartRecoversBitIdenticalValuesSlotsAndVersion() {
    BlockSpec spec = spec(OptimizerSpec.Kind.ADAM, "cosine:20", 0.01f, -1);
    PsSettings every4 = settings(4, Duration.ofSeconds(5), PsSettings.NonFinitePolicy.REJECT);
    EventSourcedBehaviorTestKit<Command, Event, BlockState> tk = started(spec, every4);
    for (int step = 1; step <= 7; step++) {
      push(tk, "a", step, 2L * step - 2, 1f, GA);
      push(tk, "b", step, 2L * step - 1, 1f, GB);
    }
    BlockState before = tk.getState().copy();
    BlockState recovered = tk.restart().state();
    assertSameState(before, recovered);
    assertEquals(14, recovered.version());
    // Replayed duplicates are still recognised after recovery.
    assertEquals(new Duplicate(14), push(tk, "a", 7, 12, 1f, GA).getValue());
  }

  /**
   * Group commit: while the first push's write is held in the journal, three more pushes arrive;
   * they are journaled together in the next write, applied in arrival order, and acknowledged only
   * once written. A recovery from that journal lands on the same values bit for bit.
   */
  @Test
  void pushesArrivingWhileAWriteIsInFlightAreJournaledTogetherInOneWrite() throws InterruptedException {
    BlockSpec spec = spec(OptimizerSpec.Kind.ADAM, "constant", 0.01f, -1);
    ActorRef<Command> block = kit.spawn(ParameterBlock.create(spec.entityId(), settings()));
    TestProbe<StatusReply<Long>> initialized = kit.createTestProbe();
    block.tell(new Initialize(spec, INIT, initialized.ref()));
    assertEquals(0L, initialized.receiveMessage().getValue());

    String persistenceId = ParameterBlock.ENTITY_KEY.name() + "|" + spec.entityId();
    List<Integer> writes = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch firstWriteHeld = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PersistenceTestKit journal = PersistenceTestKit.create(kit.system());
    journal.withPolicy((id, op) -> {
      if (id.equals(persistenceId) && op instanceof WriteEvents w) {
        writes.add(w.getBatch().size());
        if (writes.size() == 1) {
          firstWriteHeld.countDown();
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      return ProcessingSuccess$.MODULE$;
    });
    try {
      List<TestProbe<StatusReply<PushAck>>> acks = new ArrayList<>();
      // The last is trainer b's step 1 again, sent while its first copy waits for the write.
      String[] trainers = {"a", "b", "a", "c", "b"};
      long[] steps = {1, 1, 2, 1, 1};
      float[][] gradients = {GA, GB, GB, GA, GB};
      for (int i = 0; i < 5; i++) {
        TestProbe<StatusReply<PushAck>> ack = kit.createTestProbe();
        acks.add(ack);
        block.tell(new PushGradient(trainers[i], steps[i], 0, 1, 1f, gradients[i], ack.ref()));
        if (i == 0) assertTrue(firstWriteHeld.await(5, TimeUnit.SECONDS), "the first push was not written");
      }
      acks.get(1).expectNoMessage(Duration.ofMillis(200));
      acks.get(4).expectNoMessage(Duration.ofMillis(10));
      release.countDown();
      assertEquals(new Applied(1), acks.get(0).receiveMessage().getValue());
      for (int i = 1; i < 4; i++) assertEquals(new Applied(4), acks.get(i).receiveMessage().getValue());
      // Answered only once the copy it repeats is journaled.
      assertEquals(new Duplicate(4), acks.get(4).receiveMessage().getValue());
      assertEquals(List.of(1, 3), writes);
    } finally {
      release.countDown();
      journal.resetPolicy();
    }

    Optimizer adam = spec.optimizer().create();
    OptimizerState st = OptimizerState.create(adam, INIT.length);
    float[] expected = INIT.clone();
    for (float[] g : new float[][] {GA, GB, GB, GA}) st.step(adam, spec.schedule(), expected, g);
    kit.stop(block);
    ActorRef<Command> recovered = kit.spawn(ParameterBlock.create(spec.entityId(), settings()));
    TestProbe<StatusReply<BlockValues>> pulled = kit.createTestProbe();
    recovered.tell(new Pull(4, pulled.ref()));
    BlockValues v = pulled.receiveMessage().getValue();
    assertEquals(4, v.version());
    assertBitsEqual(expected, v.values(), "values recovered from the grouped journal");
  }

  @Test
  void afterAFailedWriteTheRestartedBlockWritesAndAcknowledgesTheNextPushes() {
    BlockSpec spec = spec(OptimizerSpec.Kind.ADAM, "constant", 0.01f, -1);
    ActorRef<Command> block = kit.spawn(ParameterBlock.create(spec.entityId(), settings()));
    TestProbe<StatusReply<Long>> initialized = kit.createTestProbe();
    block.tell(new Initialize(spec, INIT, initialized.ref()));
    assertEquals(0L, initialized.receiveMessage().getValue());

    PersistenceTestKit journal = PersistenceTestKit.create(kit.system());
    journal.failNextPersisted(ParameterBlock.ENTITY_KEY.name() + "|" + spec.entityId());
    TestProbe<StatusReply<PushAck>> lost = kit.createTestProbe();
    block.tell(new PushGradient("a", 1, 0, 1, 1f, GA, lost.ref()));
    lost.expectNoMessage(Duration.ofMillis(500));
    // The block restarted after the failed write; the trainer sends its push again, another trainer pushes.
    TestProbe<StatusReply<PushAck>> again = kit.createTestProbe();
    block.tell(new PushGradient("a", 1, 0, 1, 1f, GA, again.ref()));
    assertEquals(new Applied(1), again.receiveMessage(Duration.ofSeconds(10)).getValue());
    TestProbe<StatusReply<PushAck>> other = kit.createTestProbe();
    block.tell(new PushGradient("b", 1, 0, 1, 1f, GB, other.ref()));
    assertEquals(new Applied(2), other.receiveMessage(Duration.ofSeconds(10)).getValue());
    lost.expectNoMessage(Duration.ofMillis(10));
  }
}
