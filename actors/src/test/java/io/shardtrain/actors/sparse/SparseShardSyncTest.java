package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.INIT;
import static io.shardtrain.actors.sparse.SparseTestSupport.assertBitsEqual;
import static io.shardtrain.actors.sparse.SparseTestSupport.init;
import static io.shardtrain.actors.sparse.SparseTestSupport.members;
import static io.shardtrain.actors.sparse.SparseTestSupport.oneShard;
import static io.shardtrain.actors.sparse.SparseTestSupport.pull;
import static io.shardtrain.actors.sparse.SparseTestSupport.settings;
import static io.shardtrain.actors.sparse.SparseTestSupport.shard;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.actors.sparse.SparseProtocol.Accepted;
import io.shardtrain.actors.sparse.SparseProtocol.Applied;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.Duplicate;
import io.shardtrain.actors.sparse.SparseProtocol.Problem;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.Refused;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparseShardSyncTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardSyncTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static EventSourcedBehaviorTestKit<Command, Event, ShardState> started(TableSpec spec, String... trainers) {
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, settings());
    assertEquals(new SparseProtocol.ShardReady(0), init(tk, spec, 0));
    assertEquals(new SparseProtocol.MembershipInForce(1), members(tk, 1, trainers));
    return tk;
  }

  private static TestProbe<PushReply> send(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, String trainer,
      long step, float weight, long[] ids, float[] grads) {
    TestProbe<PushReply> probe = kit.createTestProbe();
    tk.runCommand(new PushRows(trainer, step, step - 1, weight, ids, grads, probe.ref()));
    return probe;
  }

  private static float[] initial(long id, int dim) {
    float[] v = new float[dim];
    INIT.fill(id, v, 0, dim);
    return v;
  }

  @Test
  void twoTrainersPushingOverlappingRowsGetOneApplyOfTheirWeightedSummedGradient() {
    TableSpec spec = oneShard();
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(spec, "a", "b");
    // a (2 examples) carries rows 4 and 7; b (1 example) rows 7 and 9: row 7 gets both.
    float[] ga = {1f, 2f, 3f, 0.5f, -1f, 0.25f};
    float[] gb = {4f, -2f, 1f, 8f, 0f, -4f};
    TestProbe<PushReply> a = send(tk, "a", 1, 2f, new long[] {4, 7}, ga);
    a.expectNoMessage(Duration.ofMillis(50));
    var done = tk.<PushReply>runCommand(r -> new PushRows("b", 1, 0, 1f, new long[] {7, 9}, gb, r));
    assertEquals(new Applied(1), done.reply());
    assertEquals(new Accepted(1), a.receiveMessage());

    StepCommitted step = (StepCommitted) done.events().get(0);
    assertArrayEquals(new long[] {4, 7, 9}, step.ids());
    assertArrayEquals(new int[] {1, 2, 1}, step.sightings());
    assertEquals(3, step.examples());
    assertEquals(List.of("a", "b"), step.contributors());

    // One AdaGrad apply of (2 ga + 1 gb) / 3 per row, a row's missing pushes adding zero.
    float[][] mean = {
      {2f * 1f / 3f, 2f * 2f / 3f, 2f * 3f / 3f},
      {(2f * 0.5f + 4f) / 3f, (2f * -1f + -2f) / 3f, (2f * 0.25f + 1f) / 3f},
      {8f / 3f, 0f / 3f, -4f / 3f}};
    long[] ids = {4, 7, 9};
    Rows rows = (Rows) pull(tk, 1, 9, 4, 7, 4);
    assertArrayEquals(new long[] {9, 4, 7}, rows.ids(), "each row once, in the order first asked");
    for (int r = 0; r < 3; r++) {
      float[] expected = new float[6];
      System.arraycopy(initial(ids[r], 3), 0, expected, 0, 3);
      RowOptimizer opt = spec.optimizer();
      opt.initSlots(expected, 0, 3);
      opt.apply(expected, 0, 3, mean[r], 0);
      int at = r == 0 ? 1 : r == 1 ? 2 : 0;
      float[] got = java.util.Arrays.copyOfRange(rows.values(), at * 3, at * 3 + 3);
      assertBitsEqual(java.util.Arrays.copyOf(expected, 3), got, "row " + ids[r]);
      assertTrue(Math.abs(got[0] - initial(ids[r], 3)[0]) > 1e-3f, "row " + ids[r] + " moved");
    }
    assertEquals(1, rows.version());
  }

  @Test
  void aStepsUpdateIsTheSameBitForBitWhicheverTrainersPushArrivesFirst() {
    // Each push carries every row of 0..19 twice, so a row's sum has four terms and the order they
    // are added in shows in its last bits.
    long[] ids = new long[40];
    for (int k = 0; k < 40; k++) ids[k] = k % 20;
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
    float[] ga = new float[40 * 3];
    float[] gb = new float[40 * 3];
    for (int k = 0; k < ga.length; k++) {
      ga[k] = (float) rnd.nextGaussian();
      gb[k] = (float) rnd.nextGaussian();
    }
    java.util.Map<String, float[]> grads = java.util.Map.of("a", ga, "b", gb);
    java.util.Map<String, Float> weights = java.util.Map.of("a", 3f, "b", 5f);
    long[] rows = java.util.stream.LongStream.range(0, 20).toArray();
    List<List<String>> arrivals = List.of(List.of("a", "b"), List.of("b", "a"));
    float[][] pulled = new float[2][];
    List<List<String>> contributors = new java.util.ArrayList<>();
    for (int order = 0; order < 2; order++) {
      EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(oneShard(), "a", "b");
      String first = arrivals.get(order).get(0), second = arrivals.get(order).get(1);
      TestProbe<PushReply> held = send(tk, first, 1, weights.get(first), ids, grads.get(first));
      var done = tk.<PushReply>runCommand(
          r -> new PushRows(second, 1, 0, weights.get(second), ids, grads.get(second), r));
      assertEquals(new Applied(1), done.reply());
      assertEquals(new Accepted(1), held.receiveMessage());
      contributors.add(((StepCommitted) done.events().get(0)).contributors());
      pulled[order] = ((Rows) pull(tk, 1, rows)).values();
    }
    assertEquals(List.of("a", "b"), contributors.get(0));
    assertEquals(contributors.get(0), contributors.get(1), "contributors in trainer order");
    assertBitsEqual(pulled[0], pulled[1], "rows after b's push arrived first");
  }

  @Test
  void aRepeatedPushOfATrainerStepIsAcknowledgedAsDuplicateAndNotAppliedAgain() {
    TableSpec spec = oneShard();
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(spec, "a", "b");
    float[] g = {1f, 1f, 1f};
    TestProbe<PushReply> first = send(tk, "a", 1, 1f, new long[] {3}, g);
    // Before the step is applied: a's second push of step 1 is a duplicate, and nothing is journaled.
    var again = tk.<PushReply>runCommand(r -> new PushRows("a", 1, 0, 1f, new long[] {3}, g, r));
    assertEquals(new Duplicate(0), again.reply());
    assertTrue(again.hasNoEvents());
    tk.<PushReply>runCommand(r -> new PushRows("b", 1, 0, 1f, new long[0], new float[0], r));
    assertEquals(new Accepted(1), first.receiveMessage());
    float[] after = ((Rows) pull(tk, 1, 3)).values();
    // After it: the same push again changes nothing.
    var late = tk.<PushReply>runCommand(r -> new PushRows("a", 1, 0, 1f, new long[] {3}, g, r));
    assertEquals(new Duplicate(1), late.reply());
    assertTrue(late.hasNoEvents());
    assertArrayEquals(after, ((Rows) pull(tk, 1, 3)).values());
    assertEquals(1, tk.getState().rowsCreated);
  }

  @Test
  void badRowsAreRefusedNamingTheProblemAndChangeNothing() {
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 4, 1000, 2, INIT, RowOptimizer.sgd(0.5f));
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 1, settings());
    init(tk, spec, 1);
    members(tk, 1, "a");
    long mine = 0;
    long other = 0;
    while (spec.shardOf(mine) != 1) mine++;
    while (spec.shardOf(other) == 1) other++;
    long ownId = mine;
    long otherId = other;
    record Case(Problem problem, long[] ids, float[] grads, String says) {}
    List<Case> cases = List.of(
        new Case(Problem.ID_OUTSIDE_TABLE, new long[] {ownId, 1000}, new float[4], "row id 1000"),
        new Case(Problem.ID_OUTSIDE_TABLE, new long[] {-3}, new float[2], "row id -3"),
        new Case(Problem.WRONG_SHARD, new long[] {otherId}, new float[2], "belongs to shard " + spec.shardOf(otherId)),
        new Case(Problem.WRONG_DIM, new long[] {ownId}, new float[3], "need 2 floats, got 3"),
        new Case(Problem.NON_FINITE, new long[] {ownId, ownId}, new float[] {0f, 1f, Float.NaN, 0f}, "NaN"));
    for (Case c : cases) {
      var result = tk.<PushReply>runCommand(r -> new PushRows("a", 1, 0, 1f, c.ids(), c.grads(), r));
      Refused refused = assertInstanceOf(Refused.class, result.reply());
      assertEquals(c.problem(), refused.problem(), refused.message());
      assertTrue(refused.message().contains(c.says()), refused.message());
      assertTrue(result.hasNoEvents());
    }
    assertEquals(0, tk.getState().version);
    assertTrue(tk.getState().pending.isEmpty(), "no refused push waits in the barrier");
    assertEquals(0, tk.getState().table.store().size());
    Refused outside = assertInstanceOf(Refused.class, pull(tk, 0, ownId, 5000));
    assertEquals(Problem.ID_OUTSIDE_TABLE, outside.problem());
    // The good push still completes the step afterwards.
    assertEquals(new Applied(1),
        tk.<PushReply>runCommand(r -> new PushRows("a", 1, 0, 1f, new long[] {ownId}, new float[] {1f, 2f}, r)).reply());
  }

  @Test
  void aPullForTheNextVersionWaitsForTheStepAndAMembershipWithoutTheMissingTrainerCompletesIt() {
    TableSpec spec = oneShard();
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(spec, "a", "b");
    TestProbe<SparseProtocol.PullReply> waiting = kit.createTestProbe();
    tk.runCommand(new SparseProtocol.PullRows(new long[] {5}, 1, waiting.ref()));
    TestProbe<PushReply> a = send(tk, "a", 1, 1f, new long[] {5}, new float[] {1f, 1f, 1f});
    waiting.expectNoMessage(Duration.ofMillis(50));
    // b left: epoch 2 holds a only, so the step completes with a's push.
    assertEquals(new SparseProtocol.MembershipInForce(2), members(tk, 2, "a"));
    assertEquals(new Accepted(1), a.receiveMessage());
    Rows rows = assertInstanceOf(Rows.class, waiting.receiveMessage());
    assertEquals(1, rows.version());
    assertEquals(1, tk.getState().version);
  }
}
