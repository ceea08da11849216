package io.shardtrain.actors.sparse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.master.AucShares;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.data.CtrGenerator;
import io.shardtrain.compute.metrics.Auc;
import io.shardtrain.compute.metrics.AucHistogram;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.nn.FmBatch;
import io.shardtrain.compute.sparse.BatchRows;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.SparseTable;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FmSparseSyncEquivalenceTest {
  private static final int STEPS = 20;
  private static final int A = 40; // an uneven split of each 64-example batch
  private static final int B = 24;
  private static final float DENSE_LR = 0.05f;
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("FmSparseSyncEquivalenceTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void twoTrainersFor20SyncStepsEqualOneProcessOnTheConcatenatedBatchesIncludingSharedRows() throws Exception {
    // 6 fields of 30 values in 512 ids: the two halves of a batch share many rows.
    CtrGenerator gen = new CtrGenerator(new CtrGenerator.Config(6, 30, 512, 3, 1.1, 0.5, 0.5, -1.0, 5));
    CtrDataset data = gen.generate(STEPS * (A + B));
    FactorizationMachine fm = new FactorizationMachine(6, 3, 4);
    RowInit init = new RowInit(RowInit.Kind.NORMAL, 0.05f, 9);
    RowOptimizer adagrad = RowOptimizer.adagrad(0.5f, 0.1f);
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 2, 512, fm.rowWidth(), init, adagrad);
    Map<Integer, ActorRef<Command>> shards = shards(spec, "a", "b");
    Duration t = Duration.ofSeconds(10);
    FmSparseStep a = new FmSparseStep(fm, new SparseClient(spec, "a", t, kit.system().scheduler(), shards::get));
    FmSparseStep b = new FmSparseStep(fm, new SparseClient(spec, "b", t, kit.system().scheduler(), shards::get));

    // The reference: one process, one table, the whole batch.
    SparseTable table = new SparseTable(fm.rowWidth(), init, adagrad, 1, 1, 1, 0);
    FmBatch whole = new FmBatch(fm);
    float[] refDense = fm.initialDense(0.05f, 3);
    float[] dense = refDense.clone();
    float[] gA = new float[fm.denseSize()];
    float[] gB = new float[fm.denseSize()];
    float[] gWhole = new float[fm.denseSize()];
    int sharedRows = 0;
    long distinctA = 0;

    var fetchA = a.fetch(ids(data, 0, A), A, 0).toCompletableFuture();
    var fetchB = b.fetch(ids(data, A, B), B, 0).toCompletableFuture();
    for (int step = 1; step <= STEPS; step++) {
      int base = (step - 1) * (A + B);
      FmSparseStep.Fetched fa = fetchA.get();
      FmSparseStep.Fetched fb = fetchB.get();
      assertEquals(step - 1, fa.version());
      distinctA += fa.distinctRows();
      fa.compute(dense(data, base, A), labels(data, base, A), dense, gA);
      fb.compute(dense(data, base + A, B), labels(data, base + A, B), dense, gB);
      var pushA = fa.push(step, step - 1).toCompletableFuture();
      var pushB = fb.push(step, step - 1).toCompletableFuture();
      // The next batch's rows are asked for before this step's pushes are answered; they come once it is applied.
      if (step < STEPS) {
        fetchA = a.fetch(ids(data, base + A + B, A), A, step).toCompletableFuture();
        fetchB = b.fetch(ids(data, base + A + B + A, B), B, step).toCompletableFuture();
      }
      CompletableFuture.allOf(pushA, pushB).get();
      for (var reply : pushA.get()) assertTrue(reply instanceof SparseProtocol.Accepted
          || reply instanceof SparseProtocol.Applied, String.valueOf(reply));
      // The dense part, as sync parameter blocks combine it: the batch-size-weighted mean.
      for (int i = 0; i < dense.length; i++) dense[i] -= DENSE_LR * ((A * gA[i] + B * gB[i]) / (A + B));

      sharedRows += shared(ids(data, base, A), ids(data, base + A, B));
      whole.index(ids(data, base, A + B), A + B);
      BatchRows rows = whole.rowIds();
      int w = fm.rowWidth();
      for (int u = 0; u < rows.distinctCount(); u++) table.read(rows.id(u), whole.rows(), u * w);
      whole.trainStep(dense(data, base, A + B), labels(data, base, A + B), refDense, gWhole);
      for (int u = 0; u < rows.distinctCount(); u++) table.apply(rows.id(u), whole.rowGrad(), u * w, 1, step);
      for (int i = 0; i < refDense.length; i++) refDense[i] -= DENSE_LR * gWhole[i];
    }
    assertTrue(sharedRows > 50, "rows touched by both trainers in one step: " + sharedRows);

    long[] stored = new long[table.store().size()];
    for (int r = 0; r < stored.length; r++) stored[r] = table.store().id(r);
    var pulled = new SparseClient(spec, "a", t, kit.system().scheduler(), shards::get).pull(stored, STEPS)
        .toCompletableFuture().get();
    assertEquals(STEPS, pulled.version());
    int w = fm.rowWidth();
    float[] expected = new float[w];
    double worst = 0;
    for (int k = 0; k < stored.length; k++) {
      table.read(stored[k], expected, 0);
      worst = Math.max(worst, relErr(Arrays.copyOfRange(pulled.rows(), k * w, k * w + w), expected));
    }
    assertTrue(worst < 1e-5, "worst row relative error " + worst + " over " + stored.length + " rows");
    assertTrue(relErr(dense, refDense) < 1e-5, "dense relative error " + relErr(dense, refDense));
    // Every stored row moved away from its initial values: the comparison is of trained rows.
    float[] initial = new float[w];
    init.fill(stored[0], initial, 0, w);
    table.read(stored[0], expected, 0);
    assertTrue(relErr(initial, expected) > 1e-2);
    // Each distinct row of a's batches went out once as an id and came back once as w floats, and its
    // gradient went out once with its id: (8 + 4 w) bytes per distinct row, both ways.
    assertEquals((8.0 + 4 * w) * distinctA / (STEPS * A), a.pullBytesPerExample(), 1e-9);
    assertEquals((8.0 + 4 * w) * distinctA / (STEPS * A), a.pushBytesPerExample(), 1e-9);
  }

  private static Map<Integer, ActorRef<Command>> shards(TableSpec spec, String... trainers) {
    Map<Integer, ActorRef<Command>> shards = new HashMap<>();
    for (int s = 0; s < spec.shards(); s++) {
      ActorRef<Command> ref = kit.spawn(SparseShard.create(spec.entityId(s), SparseTestSupport.settings()));
      shards.put(s, ref);
      var ready = kit.<SparseProtocol.InitReply>createTestProbe();
      ref.tell(new SparseProtocol.InitShard(spec, s, ready.ref()));
      ready.expectMessage(new SparseProtocol.ShardReady(0));
      var members = kit.<SparseProtocol.MembershipReply>createTestProbe();
      ref.tell(new SparseProtocol.UpdateMembership(1, List.of(trainers), members.ref()));
      members.expectMessage(new SparseProtocol.MembershipInForce(1));
    }
    return shards;
  }

  @Test
  void theAucMergedFromThreeTrainersUnevenSharesEqualsTheExactAucOfAllPredictions() throws Exception {
    CtrGenerator gen = new CtrGenerator(new CtrGenerator.Config(6, 200, 2048, 3, 1.1, 0.5, 1.0, -1.0, 8));
    CtrDataset test = gen.generate(6237);
    FactorizationMachine fm = new FactorizationMachine(6, 3, 4);
    // Wide initial rows stand in for trained ones: predictions spread over (0, 1) with few ties.
    RowInit init = new RowInit(RowInit.Kind.NORMAL, 0.3f, 4);
    TableSpec spec = TableSpec.of(SparseTestSupport.freshTable(), 3, 2048, fm.rowWidth(), init,
        RowOptimizer.sgd(0.1f));
    Map<Integer, ActorRef<Command>> shards = shards(spec, "a", "b", "c");
    float[] dense = fm.initialDense(0.5f, 6);
    // The planted dense weights make the predictions informative (AUC well above 1/2).
    float[] planted = gen.denseWeights();
    for (int j = 0; j < planted.length; j++) dense[1 + j] = 3 * planted[j];
    int[] cut = {0, 5000, 6200, 6237};
    String[] names = {"a", "b", "c"};
    AucShares merged = new AucShares(1, java.util.Set.of(names), 10_000);
    Duration t = Duration.ofSeconds(10);
    for (int k = 0; k < 3; k++) {
      int n = cut[k + 1] - cut[k];
      FmSparseStep evaluator = new FmSparseStep(fm, new SparseClient(spec, names[k], t, kit.system().scheduler(),
          shards::get));
      AucHistogram share = evaluator.evaluate(ids(test, cut[k], n), dense(test, cut[k], n), labels(test, cut[k], n),
          n, dense, 10_000, 0, 1000).toCompletableFuture().get();
      assertEquals(n, share.count());
      boolean complete = merged.add(names[k], share.positives(), share.negatives());
      assertEquals(k == 2, complete);
      if (k == 1) assertEquals(false, merged.add("b", share.positives(), share.negatives()), "a resent share replaces");
    }
    assertEquals(6237, merged.examples());

    // Every prediction in one process, from the same initial rows: the exact, sort-based AUC.
    SparseTable table = new SparseTable(fm.rowWidth(), init, RowOptimizer.sgd(0.1f), 1, 1, 1, 0);
    FmBatch all = new FmBatch(fm);
    all.index(test.ids(), test.size());
    for (int u = 0; u < all.rowIds().distinctCount(); u++) {
      table.read(all.rowIds().id(u), all.rows(), u * fm.rowWidth());
    }
    float[] probs = new float[test.size()];
    all.predict(test.dense(), dense, probs);
    double exact = Auc.exact(probs, test.labels());
    assertTrue(exact > 0.55 && exact < 0.95, "exact AUC " + exact);
    assertEquals(exact, merged.auc(), 1e-3);
    var outsider = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> merged.add("d", new long[10_000], new long[10_000]));
    assertTrue(outsider.getMessage().endsWith("not from d"), outsider.getMessage());
  }

  private static int shared(int[] x, int[] y) {
    Set<Integer> s = new HashSet<>();
    for (int v : x) s.add(v);
    Set<Integer> both = new HashSet<>();
    for (int v : y) if (s.contains(v)) both.add(v);
    return both.size();
  }

  private static double relErr(float[] actual, float[] expected) {
    double diff = 0;
    double norm = 0;
    for (int i = 0; i < expected.length; i++) {
      diff += (actual[i] - expected[i]) * (double) (actual[i] - expected[i]);
      norm += expected[i] * (double) expected[i];
    }
    return Math.sqrt(diff) / Math.max(Math.sqrt(norm), 1e-12);
  }

  private static int[] ids(CtrDataset d, int from, int n) {
    return Arrays.copyOfRange(d.ids(), from * d.fields(), (from + n) * d.fields());
  }

  private static float[] dense(CtrDataset d, int from, int n) {
    return Arrays.copyOfRange(d.dense(), from * d.denseDim(), (from + n) * d.denseDim());
  }

  private static float[] labels(CtrDataset d, int from, int n) {
    return Arrays.copyOfRange(d.labels(), from, from + n);
  }
}
