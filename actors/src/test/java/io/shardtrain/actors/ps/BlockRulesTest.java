package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockProtocol.Accepted;
import io.shardtrain.actors.ps.BlockProtocol.Applied;
import io.shardtrain.actors.ps.BlockProtocol.Duplicate;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.Skipped;
import io.shardtrain.actors.ps.BlockProtocol.Stale;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a push does to a block, decided without an actor system. */
class BlockRulesTest {
  private final BlockCounters counters = new BlockCounters();

  private BlockRules rules(PsSettings.NonFinitePolicy nonFinite) {
    PsSettings settings = new PsSettings(1024, 100, Duration.ofSeconds(5), Duration.ofSeconds(1), nonFinite, -1, 1);
    return new BlockRules("w#0", settings, new BlockDurability.Exact(), counters);
  }

  private static BlockState started() {
    BlockSpec spec = new BlockSpec("w", 0, 0, 2, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "constant", 0.1f,
        BlockSpec.Mode.SYNC, -1);
    return new BlockState().apply(new Initialized(spec, new float[] {1f, 1f}))
        .apply(new MembershipUpdated(1, List.of("a", "b")));
  }

  private static PushGradient push(String trainer, long step, float[] g) {
    return new PushGradient(trainer, step, step - 1, 1, 1f, g, null);
  }

  @Test
  void theLastMissingTrainersPushRecordsItsGradientAndTheStep() {
    BlockRules rules = rules(PsSettings.NonFinitePolicy.REJECT);
    BlockState s = started();
    BlockRules.PushOutcome first = rules.push(s, push("a", 1, new float[] {1f, 2f}), new GroupCommit());
    assertEquals(1, first.events().size());
    assertTrue(first.events().get(0) instanceof GradientReceived);
    assertEquals(new Accepted(0), first.ack().apply(0));
    s.apply(first.events().get(0));

    BlockRules.PushOutcome last = rules.push(s, push("b", 1, new float[] {3f, 4f}), new GroupCommit());
    assertEquals(new StepApplied(1), last.events().get(1));
    assertEquals(new Applied(1), last.ack().apply(1));
  }

  @Test
  void aSecondPushForThePendingStepIsADuplicate() {
    BlockRules rules = rules(PsSettings.NonFinitePolicy.REJECT);
    BlockState s = started();
    s.apply(new GradientReceived("a", 1, 1f, new float[] {1f, 2f}));
    BlockRules.PushOutcome again = rules.push(s, push("a", 1, new float[] {1f, 2f}), new GroupCommit());
    assertEquals(new Duplicate(0), again.ack().apply(0));
    assertEquals(List.of(), again.events());
    assertEquals(1, counters.duplicates);
  }

  @Test
  void aPushAheadOfTheNextStepOrOfTheWrongLengthIsRefusedAndCounted() {
    BlockRules rules = rules(PsSettings.NonFinitePolicy.REJECT);
    BlockState s = started();
    GroupCommit none = new GroupCommit();
    assertTrue(rules.push(s, push("a", 2, new float[] {1f, 2f}), none).error().contains("is ahead of block w#0"));
    assertTrue(rules.push(s, push("a", 1, new float[] {1f}), none).error().contains("does not match block w#0"));
    assertEquals(2, counters.pushes);
    assertEquals(1, counters.rejectedAhead);
    assertEquals(1, counters.rejectedBadLength);
  }

  @Test
  void aNonFiniteGradientIsRefusedOrRecordedAsSkippedByPolicy() {
    float[] nan = {Float.NaN, 1f};
    assertTrue(rules(PsSettings.NonFinitePolicy.REJECT).push(started(), push("a", 1, nan), new GroupCommit()).error()
        .contains("non-finite value NaN at index 0"));
    BlockRules.PushOutcome skipped =
        rules(PsSettings.NonFinitePolicy.SKIP).push(started(), push("a", 1, nan), new GroupCommit());
    assertNull(skipped.error());
    assertEquals(List.of(new GradientSkipped("a", 1)), skipped.events());
    assertEquals(new Skipped(0), skipped.ack().apply(0));
  }

  /**
   * Async pushes accepted but not written yet count: a resend of one is a duplicate, and the
   * staleness bound is measured at the version the push will be applied to, after them.
   */
  @Test
  void anAsyncPushSeesThePushesWaitingForTheNextWrite() {
    BlockRules rules = rules(PsSettings.NonFinitePolicy.REJECT);
    BlockSpec spec = new BlockSpec("w", 0, 0, 2, OptimizerSpec.defaults(OptimizerSpec.Kind.SGD), "constant", 0.1f,
        BlockSpec.Mode.ASYNC, 1);
    BlockState s = new BlockState().apply(new Initialized(spec, new float[] {1f, 1f}));
    GroupCommit unwritten = new GroupCommit();
    float[] g = {1f, 2f};
    assertTrue(unwritten.add(new GradientApplied("a", 3, 1f, g, null), new PendingAck(null, Applied::new, null)));
    // Repeats of the waiting push get no answer now: theirs goes out with the group's, after its write.
    for (long step : new long[] {2, 3}) {
      BlockRules.PushOutcome repeat = rules.push(s, new PushGradient("a", step, 0, 1, 1f, g, null), unwritten);
      assertTrue(repeat.error() == null && repeat.events().isEmpty() && repeat.ack() == null, "held: " + repeat);
    }
    assertEquals(1, unwritten.size(), "repeats are no updates");
    assertEquals(1, rules.push(s, new PushGradient("a", 4, 0, 1, 1f, g, null), unwritten).events().size());
    // Base version 0, applied at version 1 (after the waiting push): within the bound of 1.
    assertEquals(1, rules.push(s, new PushGradient("b", 1, 0, 1, 1f, g, null), unwritten).events().size());
    assertTrue(!unwritten.add(new GradientApplied("a", 4, 1f, g, null), new PendingAck(null, Applied::new, null)));
    // Applied at version 2: two versions behind its base, over the bound.
    assertEquals(new Stale(0), rules.push(s, new PushGradient("b", 1, 0, 1, 1f, g, null), unwritten).ack().apply(0));
    List<GroupCommit.Waiting> group = unwritten.take();
    assertEquals(2, GroupCommit.events(group).size(), "the two pushes' events");
    assertEquals(List.of(new Applied(5), new Applied(5), new Duplicate(5), new Duplicate(5)),
        group.stream().map(w -> w.ack().ack().apply(5)).toList(), "then the repeats' answers");
  }
}
