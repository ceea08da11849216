package io.shardtrain.actors.sparse;

import static io.shardtrain.actors.sparse.SparseTestSupport.assertSameState;
import static io.shardtrain.actors.sparse.SparseTestSupport.init;
import static io.shardtrain.actors.sparse.SparseTestSupport.members;
import static io.shardtrain.actors.sparse.SparseTestSupport.settings;
import static io.shardtrain.actors.sparse.SparseTestSupport.shard;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.javadsl.Adapter;
import akka.persistence.testkit.ProcessingPolicy;
import akka.persistence.testkit.ProcessingResult;
import akka.persistence.testkit.ProcessingSuccess$;
import akka.persistence.testkit.StorageFailure;
import akka.persistence.testkit.WriteEvents;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import akka.serialization.SerializationExtension;
import io.shardtrain.actors.sparse.SparseEvents.Event;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotBegun;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotCompleted;
import io.shardtrain.actors.sparse.SparseProtocol.Command;
import io.shardtrain.actors.sparse.SparseProtocol.PushReply;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.ShardStats;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparseShardRecoveryTest {
  private static ActorTestKit kit;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("SparseShardRecoveryTest", SparseTestSupport.CONFIG);
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /** AdaGrad rows of 4 (8 floats with the slot), admitted on their 2nd sighting, evicted after 3 idle steps. */
  private static TableSpec table() {
    return TableSpec.of(SparseTestSupport.freshTable(), 1, 100_000, 4, SparseTestSupport.INIT,
            RowOptimizer.adagrad(0.05f, 0.1f))
        .withAdmission(2, 4, 1024).withExpiry(3);
  }

  private static EventSourcedBehaviorTestKit<Command, Event, ShardState> started(TableSpec spec, SparseSettings s) {
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = shard(kit, spec, 0, s);
    init(tk, spec, 0);
    members(tk, 1, "a", "b");
    return tk;
  }

  /**
   * Steps {@code from..to} of trainers a and b: each pushes 60 rows, 40 of them from a hot set of
   * 300 ids (seen often, admitted, kept) and 20 rare ones (most never admitted, some expiring).
   */
  private static void train(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk, int from, int to) {
    for (int step = from; step <= to; step++) {
      var held = kit.<PushReply>createTestProbe();
      for (String trainer : new String[] {"a", "b"}) {
        SplittableRandom rnd = new SplittableRandom(step * 31L + trainer.hashCode());
        long[] ids = new long[60];
        for (int k = 0; k < 60; k++) ids[k] = k < 40 ? rnd.nextInt(300) : 1000 + rnd.nextInt(50_000);
        float[] grads = new float[60 * 4];
        for (int k = 0; k < grads.length; k++) grads[k] = (float) rnd.nextGaussian();
        long s = step;
        if (trainer.equals("a")) {
          // Held until b's push completes the step.
          tk.runCommand(new PushRows(trainer, s, s - 1, 32f, ids, grads, held.ref()));
        } else {
          PushReply reply = tk.<PushReply>runCommand(r -> new PushRows(trainer, s, s - 1, 32f, ids, grads, r)).reply();
          assertEquals(new SparseProtocol.Applied(step), reply);
        }
      }
      assertEquals(new SparseProtocol.Accepted(step), held.receiveMessage());
    }
  }

  private static ShardStats stats(EventSourcedBehaviorTestKit<Command, Event, ShardState> tk) {
    return tk.<ShardStats>runCommand(SparseProtocol.GetStats::new).reply();
  }

  @Test
  void replayRebuildsRowsSlotsAdmissionCountsAndEvictionsBitForBit() {
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(table(), settings());
    train(tk, 1, 12);
    ShardState before = tk.getState();
    // The run exercised every path: rows admitted, gradients dropped before admission, rows evicted.
    assertTrue(before.rowsCreated > 300, "created " + before.rowsCreated);
    assertTrue(before.rowsNotAdmitted > 500, "not admitted " + before.rowsNotAdmitted);
    assertTrue(before.rowsExpired > 0, "expired " + before.rowsExpired);
    tk.restart();
    assertSameState(before, tk.getState());
    assertEquals(0, stats(tk).snapshots());
  }

  @Test
  void aChunkedSnapshotKeepsEveryEventAndTheHeaderUnderTheLimitAndRecoversBitForBit() {
    int limit = 12 * 1024;
    TableSpec spec = table();
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(spec, settings(20, limit));
    train(tk, 1, 30);
    ShardState before = tk.getState();
    String pid = "SparseShard|" + spec.entityId(0);
    List<Object> journal = tk.persistenceTestKit().persistedInStorage(pid);
    var serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    long rowChunks = journal.stream().filter(e -> e instanceof RowsSaved).count();
    long sketchChunks = journal.stream().filter(e -> e instanceof SketchSaved).count();
    // 4 x 1024 counters of 4 bytes need 2 chunks; each snapshot's 300+ rows of 48 bytes need several.
    assertTrue(rowChunks >= 4 && sketchChunks >= 2, rowChunks + " row chunks, " + sketchChunks + " sketch chunks");
    for (Object e : journal) {
      int bytes = serialization.serialize(e).get().length;
      assertTrue(bytes <= limit, e.getClass().getSimpleName() + " of " + bytes + " bytes");
    }
    var snapshots = tk.snapshotTestKit().orElseThrow().persistedInStorage(pid);
    assertTrue(snapshots.size() >= 2, "snapshots: " + snapshots.size());
    for (var s : snapshots) {
      assertInstanceOf(SparseEvents.ShardHeader.class, s.second());
      assertTrue(serialization.serialize(s.second()).get().length < 1024, "the header stays small");
    }
    long events = journal.size();
    tk.restart();
    assertSameState(before, tk.getState());
    ShardStats after = stats(tk);
    // Replayed from the newest snapshot: its chunks and what followed, not the whole journal.
    assertTrue(after.eventsReplayed() < events / 2, after.eventsReplayed() + " of " + events + " events replayed");
    // Training goes on from the recovered state exactly as it would have.
    train(tk, 31, 32);
    assertEquals(32, tk.getState().version);
  }

  @Test
  void aWholeSnapshotDeletesTheEventsUpToTheSnapshotBeforeItAndOlderSnapshotsAndRecoveryStaysBitForBit()
      throws Exception {
    TableSpec spec = table();
    EventSourcedBehaviorTestKit<Command, Event, ShardState> tk = started(spec, settings(10, 12 * 1024));
    train(tk, 1, 45);
    ShardState before = tk.getState();
    long whole = stats(tk).snapshots();
    assertTrue(whole >= 4, "whole snapshots: " + whole);
    String pid = "SparseShard|" + spec.entityId(0);
    // The deletions are asynchronous: wait until the rows of snapshots before the last two are gone.
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    java.util.Set<Long> kept;
    do {
      kept = new java.util.TreeSet<>();
      for (Object e : tk.persistenceTestKit().persistedInStorage(pid)) {
        if (e instanceof RowsSaved r && r.generation() <= whole) kept.add(r.generation());
      }
      if (kept.size() > 2) Thread.sleep(20);
    } while (kept.size() > 2 && System.nanoTime() < deadline);
    assertEquals(java.util.Set.of(whole - 1, whole), kept, "the rows of the last two whole snapshots stay");
    List<Object> journal = tk.persistenceTestKit().persistedInStorage(pid);
    assertTrue(journal.stream().noneMatch(e -> e instanceof SparseEvents.ShardInitialized), "the first events are gone");
    java.util.Set<Long> headers = new java.util.TreeSet<>();
    for (var snapshot : tk.snapshotTestKit().orElseThrow().persistedInStorage(pid)) {
      long generation = ((SparseEvents.ShardHeader) snapshot.second()).generation();
      if (generation <= whole) headers.add(generation);
    }
    assertEquals(java.util.Set.of(whole - 1, whole), headers, "the headers of the last two whole snapshots stay");
    tk.restart();
    assertSameState(before, tk.getState());
    train(tk, 46, 47);
    assertEquals(47, tk.getState().version);
  }

  @Test
  void aSnapshotWhoseChunksWereNeverWrittenRecoversFromTheSnapshotBeforeIt() {
    TableSpec spec = table();
    SparseSettings settings = settings(20, 12 * 1024);
    akka.actor.typed.ActorRef<Command> shard = kit.spawn(SparseShard.create(spec.entityId(0), settings));
    // The same commands on a shard whose journal never fails: what the state must be.
    TableSpec same = new TableSpec(SparseTestSupport.freshTable(), 1, spec.rows(), spec.dim(), spec.init(),
        spec.optimizer(), spec.mode(), spec.maxStaleness(), spec.admitAfter(), spec.sketchDepth(), spec.sketchWidth(),
        spec.expireAfter());
    EventSourcedBehaviorTestKit<Command, Event, ShardState> reference = started(same, settings(1000, 12 * 1024));
    assertEquals(new SparseProtocol.ShardReady(0),
        SparseShardRecoveryTest.<SparseProtocol.InitReply>ask(shard, r -> new SparseProtocol.InitShard(spec, 0, r)));
    assertEquals(new SparseProtocol.MembershipInForce(1), SparseShardRecoveryTest.<SparseProtocol.MembershipReply>ask(
        shard, r -> new SparseProtocol.UpdateMembership(1, List.of("a", "b"), r)));
    AtomicBoolean armed = new AtomicBoolean(true);
    AtomicBoolean failed = new AtomicBoolean(false);
    AtomicBoolean slowReplay = new AtomicBoolean(false);
    var journal = akka.persistence.testkit.javadsl.PersistenceTestKit.create(kit.system());
    journal.withPolicy(new ProcessingPolicy<>() {
      @Override
      public ProcessingResult tryProcess(String persistenceId, akka.persistence.testkit.JournalOperation op) {
        // The second snapshot's chunks (the first went through whole) fail once.
        if (op instanceof WriteEvents w && w.getBatch().stream().anyMatch(e -> e instanceof SnapshotCompleted c
            && c.generation() == 2) && armed.getAndSet(false)) {
          failed.set(true);
          return StorageFailure.create(new RuntimeException("disk full (test)"));
        }
        if (op instanceof akka.persistence.testkit.ReadEvents && slowReplay.get()
            && persistenceId.equals("SparseShard|" + spec.entityId(0))) {
          try {
            Thread.sleep(500);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return ProcessingSuccess$.MODULE$;
      }
    });
    try {
      for (int step = 1; step <= 30; step++) {
        pushRetrying(shard, step);
      }
      train(reference, 1, 30);
      assertTrue(failed.get(), "the second snapshot's chunks were refused by the journal");
      List<Object> events = journal.persistedInStorage("SparseShard|" + spec.entityId(0));
      assertEquals(events.stream().filter(e -> e instanceof SnapshotBegun).count() - 1,
          events.stream().filter(e -> e instanceof SnapshotCompleted).count(), "one snapshot lacks its chunks");
      assertSameRows(reference, shard);
      // A new incarnation (a node restart) reads the journal afresh and agrees too; the pull reaches it
      // while it replays, so the broken recovery sees it first and must not lose it.
      slowReplay.set(true);
      kit.stop(shard);
      shard = kit.spawn(SparseShard.create(spec.entityId(0), settings));
      assertSameRows(reference, shard);
    } finally {
      journal.resetPolicy();
    }
  }

  @Test
  void aRecoverLeftInTheMailboxAfterTheRestartIsIgnored() {
    TableSpec spec = table();
    akka.actor.typed.ActorRef<Command> shard = kit.spawn(SparseShard.create(spec.entityId(0), settings()));
    assertEquals(new SparseProtocol.ShardReady(0),
        SparseShardRecoveryTest.<SparseProtocol.InitReply>ask(shard, r -> new SparseProtocol.InitShard(spec, 0, r)));
    // The broken incarnation sends itself Recover; a stashed push may fail it first, so the healthy
    // incarnation after the restart receives it.
    shard.tell(SparseProtocol.Recover.INSTANCE);
    ShardStats stats = SparseShardRecoveryTest.<ShardStats>ask(shard, SparseProtocol.GetStats::new);
    assertEquals(0, stats.version());
    kit.stop(shard);
  }

  private static <T> T ask(akka.actor.typed.ActorRef<Command> shard,
      java.util.function.Function<akka.actor.typed.ActorRef<T>, Command> request) {
    var probe = kit.<T>createTestProbe();
    shard.tell(request.apply(probe.ref()));
    return probe.receiveMessage(Duration.ofSeconds(10));
  }

  /**
   * Step {@code step} of trainers a and b (the pushes of {@link #train}), as trainers do it: a push
   * not answered within a second (its shard restarted) goes again under the same (trainer, step).
   */
  private static void pushRetrying(akka.actor.typed.ActorRef<Command> shard, int step) {
    java.util.Map<String, PushRows> unanswered = new java.util.LinkedHashMap<>();
    for (String trainer : new String[] {"a", "b"}) {
      SplittableRandom rnd = new SplittableRandom(step * 31L + trainer.hashCode());
      long[] ids = new long[60];
      for (int k = 0; k < 60; k++) ids[k] = k < 40 ? rnd.nextInt(300) : 1000 + rnd.nextInt(50_000);
      float[] grads = new float[60 * 4];
      for (int k = 0; k < grads.length; k++) grads[k] = (float) rnd.nextGaussian();
      unanswered.put(trainer, new PushRows(trainer, step, step - 1, 32f, ids, grads, kit.<PushReply>createTestProbe().ref()));
    }
    java.util.Map<String, akka.actor.testkit.typed.javadsl.TestProbe<PushReply>> probes = new java.util.HashMap<>();
    for (int attempt = 0; !unanswered.isEmpty(); attempt++) {
      assertTrue(attempt < 20, "step " + step + " unanswered after 20 attempts: " + unanswered.keySet());
      for (PushRows p : unanswered.values()) {
        var probe = kit.<PushReply>createTestProbe();
        probes.put(p.trainerId(), probe);
        shard.tell(new PushRows(p.trainerId(), p.step(), p.baseVersion(), p.weight(), p.ids(), p.grads(), probe.ref()));
      }
      for (String trainer : List.copyOf(unanswered.keySet())) {
        try {
          PushReply r = probes.get(trainer).receiveMessage(Duration.ofSeconds(1));
          assertTrue(!(r instanceof SparseProtocol.Refused), r.toString());
          unanswered.remove(trainer);
        } catch (AssertionError timeout) {
          if (timeout.getMessage() != null && timeout.getMessage().startsWith("Refused")) throw timeout;
        }
      }
    }
  }

  /** The shard answers every row the reference holds (and the rare ids) with the same floats, and counts alike. */
  private static void assertSameRows(EventSourcedBehaviorTestKit<Command, Event, ShardState> reference,
      akka.actor.typed.ActorRef<Command> shard) {
    long[] ids = new long[300 + 50_000];
    for (int k = 0; k < 300; k++) ids[k] = k;
    for (int k = 0; k < 50_000; k++) ids[300 + k] = 1000 + k;
    SparseProtocol.Rows expected = (SparseProtocol.Rows) SparseTestSupport.pull(reference, 30, ids);
    SparseProtocol.Rows actual = (SparseProtocol.Rows) SparseShardRecoveryTest.<SparseProtocol.PullReply>ask(shard,
        r -> new SparseProtocol.PullRows(ids, 30, r));
    assertEquals(30, actual.version());
    SparseTestSupport.assertBitsEqual(expected.values(), actual.values(), "rows");
    ShardStats e = stats(reference);
    ShardStats a = SparseShardRecoveryTest.<ShardStats>ask(shard, SparseProtocol.GetStats::new);
    assertEquals(List.of(e.rows(), e.rowsCreated(), e.rowsNotAdmitted(), e.rowsExpired()),
        List.of(a.rows(), a.rowsCreated(), a.rowsNotAdmitted(), a.rowsExpired()), "rows, created, not admitted, expired");
  }
}
