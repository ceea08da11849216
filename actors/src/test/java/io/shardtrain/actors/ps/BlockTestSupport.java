package io.shardtrain.actors.ps;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.pattern.StatusReply;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.GetStats;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.UpdateMembership;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Shared setup of the parameter block tests: an in-memory journal and snapshot store that serialize. */
final class BlockTestSupport {
  private BlockTestSupport() {}

  private static final AtomicInteger IDS = new AtomicInteger();

  /** A 5-float sync block's initial values, and two trainers' gradients for it. */
  static final float[] INIT = {0.5f, -1.25f, 2f, 0.125f, -0.75f};
  static final float[] GA = {0.1f, -0.2f, 0.3f, 0.05f, 1.5f};
  static final float[] GB = {-0.4f, 0.25f, 0.7f, -0.9f, 0.01f};

  /** Journal and snapshots go through the real serializer, so every event and snapshot is round-tripped. */
  static final Config CONFIG = ConfigFactory.parseString(
          "akka.persistence.testkit.events.serialize = on\n"
              + "akka.persistence.testkit.snapshots.serialize = on\n")
      .withFallback(PersistenceTestKitSnapshotPlugin.config())
      .withFallback(EventSourcedBehaviorTestKit.config());

  static PsSettings settings(int snapshotEvery, Duration pullTimeout, PsSettings.NonFinitePolicy nonFinite) {
    return new PsSettings(1024, snapshotEvery, pullTimeout, Duration.ofMillis(200), nonFinite, -1, 1);
  }

  static PsSettings settings() {
    return settings(100, Duration.ofSeconds(5), PsSettings.NonFinitePolicy.REJECT);
  }

  /** A fresh parameter name, so tests of one class never share a persistence id. */
  static String freshParameter() {
    return "p" + IDS.incrementAndGet();
  }

  /** A fresh block of {@link #INIT}'s length in {@code mode}: plain SGD at a constant rate of 0.1. */
  static BlockSpec sgdSpec(BlockSpec.Mode mode) {
    return new BlockSpec(freshParameter(), 0, 0, INIT.length, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD),
        "constant", 0.1f, mode, -1);
  }

  static EventSourcedBehaviorTestKit<Command, Event, BlockState> block(ActorTestKit kit, BlockSpec spec, PsSettings s) {
    return EventSourcedBehaviorTestKit.create(kit.system(), ParameterBlock.create(spec.entityId(), s));
  }

  static StatusReply<Long> init(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, BlockSpec spec, float[] values) {
    return tk.<StatusReply<Long>>runCommand(r -> new Initialize(spec, values, r)).reply();
  }

  static StatusReply<Long> membership(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, long epoch,
      String... trainers) {
    return tk.<StatusReply<Long>>runCommand(r -> new UpdateMembership(epoch, List.of(trainers), r)).reply();
  }

  static StatusReply<PushAck> push(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk, String trainer, long step,
      long baseVersion, float weight, float[] g) {
    return tk.<StatusReply<PushAck>>runCommand(
        r -> new PushGradient(trainer, step, baseVersion, 1, weight, g, r)).reply();
  }

  /**
   * Sends a push without waiting for its answer, which the returned probe gets: with exact durability
   * a sync push that does not complete its step is acknowledged only once the step is applied.
   */
  static TestProbe<StatusReply<PushAck>> send(ActorTestKit kit, EventSourcedBehaviorTestKit<Command, Event, BlockState> tk,
      String trainer, long step, long baseVersion, float weight, float[] g) {
    TestProbe<StatusReply<PushAck>> probe = kit.createTestProbe();
    tk.runCommand(new PushGradient(trainer, step, baseVersion, 1, weight, g, probe.ref()));
    return probe;
  }

  static BlockStats stats(EventSourcedBehaviorTestKit<Command, Event, BlockState> tk) {
    return tk.<BlockStats>runCommand(GetStats::new).reply();
  }

  static void assertBitsEqual(float[] expected, float[] actual, String what) {
    assertEquals(expected.length, actual.length, what + " length");
    for (int i = 0; i < expected.length; i++) {
      assertEquals(Float.floatToRawIntBits(expected[i]), Float.floatToRawIntBits(actual[i]),
          what + "[" + i + "]: expected " + expected[i] + ", got " + actual[i]);
    }
  }

  /** Values, slots, version, update count, membership, pending contributions and last steps agree bit for bit. */
  static void assertSameState(BlockState expected, BlockState actual) {
    assertEquals(expected.spec(), actual.spec());
    assertEquals(expected.version(), actual.version(), "version");
    assertEquals(expected.updates(), actual.updates(), "updates");
    assertEquals(expected.membershipEpoch(), actual.membershipEpoch(), "membership epoch");
    assertEquals(expected.members(), actual.members(), "members");
    assertEquals(expected.lastSteps(), actual.lastSteps(), "last steps");
    assertEquals(expected.examplesApplied(), actual.examplesApplied(), "examples applied");
    assertBitsEqual(expected.values(), actual.values(), "values");
    float[][] es = expected.slots();
    float[][] as = actual.slots();
    assertEquals(es.length, as.length, "slot count");
    for (int s = 0; s < es.length; s++) assertBitsEqual(es[s], as[s], "slot " + s);
    assertEquals(expected.pending().size(), actual.pending().size(), "pending contributions");
    for (int i = 0; i < expected.pending().size(); i++) {
      BlockState.Contribution e = expected.pending().get(i);
      BlockState.Contribution a = actual.pending().get(i);
      assertEquals(e.trainerId(), a.trainerId());
      assertEquals(e.weight(), a.weight());
      assertArrayEquals(e.values(), a.values());
      assertEquals(e.mark(), a.mark());
    }
  }
}
