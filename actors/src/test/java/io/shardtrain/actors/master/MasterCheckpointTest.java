package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.ps.PsSettings;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.persistence.model.Checkpoint;
import io.shardtrain.persistence.model.CheckpointFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The master's side of checkpoints, against stand-in blocks: which step it asks the blocks for,
 * the reader offsets it records at that step, the files it writes, and the rollback of checkpoint
 * durability (blocks first, then its own offsets, then the trainers).
 */
class MasterCheckpointTest {
  /** Where a test's checkpoints go; JUnit deletes it after the test. */
  @TempDir
  Path tmp;

  // Patient expectations: the two cores are shared with other builds.
  /**
   * A fresh system per test: every test's master has the same persistence id, and a master left
   * running by an earlier test (its ticks, a checkpoint in progress) would write into the next
   * test's journal.
   */
  static ActorTestKit kit;
  static final MasterSettings SETTINGS =
      new MasterSettings(Duration.ofSeconds(60), Duration.ofMillis(100), Duration.ofSeconds(2), 1000);
  static final long BLOCK_VERSION = 5;

  @BeforeEach
  void startKit() {
    kit = ActorTestKit.create("MasterCheckpointTest",
      ConfigFactory.parseString("akka.actor.testkit.typed.single-expect-default = 10s")
          .withFallback(EventSourcedBehaviorTestKit.config()).withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stopKit() {
    kit.shutdownTestKit();
  }

  /** MasterTest's job (100 examples, 2 trainers, tasks of 50) with the blocks of its real model. */
  static JobSpec job() {
    return job(0);
  }

  /** The same, bounded by {@code steps} steps (0: by its 2 epochs). */
  static JobSpec job(long steps) {
    JobSpec j = MasterTest.job();
    List<ParamShape> shapes = new ArrayList<>();
    for (Parameter p : j.newModel(CpuBackend.create(1)).parameters()) shapes.add(new ParamShape(p.name(), p.size()));
    List<String> blocks = BlockLayout.of(shapes, 8).stream().map(BlockSlice::entityId).toList();
    return new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(), j.activation(),
        j.seed(), BlockSpec.Mode.SYNC, j.trainers(), j.batch(), steps > 0 ? 0 : j.epochs(), steps, j.optimizer(), j.lr(),
        j.lrSchedule(), j.weightDecay(), j.maxStaleness(), 8, blocks, null);
  }

  /** What stand-in block {@code parameter#index} holds at {@code step}: part 0 values, part 1 its one slot. */
  static float[] value(String parameter, int index, long step, int part, int length) {
    float[] v = new float[length];
    for (int i = 0; i < length; i++) v[i] = parameter.length() + index * 10f + step * 100f + part * 1000f + i * 0.5f;
    return v;
  }

  /**
   * Blocks at version 5 that reach any later version at once: they capture a checkpoint, read it
   * out, roll back, and tell the probe what they were asked.
   */
  static Behavior<ShardingEnvelope<BlockProtocol.Command>> blocks(JobSpec job, TestProbe<Object> probe) {
    return blocks(job, probe, Duration.ZERO);
  }

  /** As above, with blocks that take {@code rollbackTime} to answer a rollback, as a recovering block does. */
  static Behavior<ShardingEnvelope<BlockProtocol.Command>> blocks(JobSpec job, TestProbe<Object> probe,
      Duration rollbackTime) {
    return blocks(job, probe, rollbackTime, Set.of());
  }

  /**
   * As above, with blocks {@code behind} one optimizer update and one batch of 8 examples short of
   * the others, as a block is that held a departed trainer's batch already when its task resumed.
   */
  static Behavior<ShardingEnvelope<BlockProtocol.Command>> blocks(JobSpec job, TestProbe<Object> probe,
      Duration rollbackTime, Set<String> behind) {
    Map<String, BlockSlice> slices = new HashMap<>();
    List<ParamShape> shapes = new ArrayList<>();
    for (Parameter p : job.newModel(CpuBackend.create(1)).parameters()) shapes.add(new ParamShape(p.name(), p.size()));
    for (BlockSlice s : BlockLayout.of(shapes, job.blockSize())) slices.put(s.entityId(), s);
    return Behaviors.setup(ctx -> Behaviors.receiveMessage(env -> {
      BlockSlice slice = slices.get(env.entityId());
      BlockProtocol.Command m = env.message();
      if (m instanceof BlockProtocol.UpdateMembership u) {
        u.replyTo().tell(StatusReply.success(u.epoch()));
      } else if (m instanceof BlockProtocol.GetStats g) {
        g.replyTo().tell(new BlockProtocol.BlockStats(env.entityId(), true, BLOCK_VERSION, BLOCK_VERSION, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, -1, List.of(), 1, 0, 0, 0, 0, 0, "", 0));
      } else if (m instanceof BlockProtocol.Checkpoint c) {
        probe.ref().tell(c);
        long missing = behind.contains(env.entityId()) ? 1 : 0;
        c.replyTo().tell(StatusReply.success(
            new BlockProtocol.Captured(env.entityId(), c.step(), c.step() - missing, 1, 8 * (c.step() - missing))));
      } else if (m instanceof BlockProtocol.ReadCheckpoint r) {
        r.replyTo().tell(StatusReply.success(new BlockProtocol.BlockValues(slice.parameter(), slice.index(),
            slice.offset(), r.step(), value(slice.parameter(), slice.index(), r.step(), r.part(), slice.length()))));
      } else if (m instanceof BlockProtocol.RollBack r) {
        probe.ref().tell(r);
        if (rollbackTime.isZero()) r.replyTo().tell(StatusReply.success(r.step()));
        else ctx.scheduleOnce(rollbackTime, r.replyTo(), StatusReply.success(r.step()));
      }
      return Behaviors.same();
    }));
  }

  record Setup(EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk, TestProbe<Object> blocks,
      TestProbe<TrainerNotice> a, TestProbe<TrainerNotice> b) {}

  /** A started job: trainers a (task 0/0) and b (task 0/1) registered and leased. */
  static Setup started(CheckpointSettings checkpoints) {
    return started(checkpoints, job());
  }

  static Setup started(CheckpointSettings checkpoints, JobSpec job) {
    return started(checkpoints, job, Duration.ZERO);
  }

  static Setup started(CheckpointSettings checkpoints, JobSpec job, Duration rollbackTime) {
    return started(checkpoints, job, rollbackTime, Set.of());
  }

  static Setup started(CheckpointSettings checkpoints, JobSpec job, Duration rollbackTime, Set<String> behind) {
    TestProbe<Object> probe = kit.createTestProbe();
    var fake = kit.spawn(blocks(job, probe, rollbackTime, behind));
    EventSourcedBehaviorTestKit<JobProtocol.Command, Master.Event, MasterState> tk =
        EventSourcedBehaviorTestKit.create(kit.system(), Master.create(SETTINGS, checkpoints, fake));
    tk.clear();
    assertTrue(tk.<StatusReply<Done>>runCommand(r -> new JobProtocol.SubmitJob(job, r)).reply().isSuccess());
    Setup s = new Setup(tk, probe, kit.createTestProbe(), kit.createTestProbe());
    tk.<StatusReply<JobProtocol.Registration>>runCommand(r -> new JobProtocol.RegisterTrainer("a", s.a().ref(), r));
    tk.<StatusReply<JobProtocol.Registration>>runCommand(r -> new JobProtocol.RegisterTrainer("b", s.b().ref(), r));
    MasterTest.Setup ms = new MasterTest.Setup(tk, null);
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 0), MasterTest.request(ms, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 0), MasterTest.request(ms, "b"));
    return s;
  }

  /** Both trainers report steps 6 and 7 (offsets 20 and 24), and a checkpoint is taken at 7. */
  static void checkpointAtStepSeven(Setup s, Path dir) {
    report(s, "a", 0, 10, 6, 0);
    report(s, "b", 1, 12, 6, 0);
    report(s, "a", 0, 20, 7, 0);
    report(s, "b", 1, 24, 7, 0);
    checkpoint(s, dir);
    for (int i = 0; i < job().blocks().size(); i++) s.blocks().receiveMessage();
  }

  static StatusReply<Done> report(Setup s, String id, int task, long offset, long step, long generation) {
    return s.tk().<StatusReply<Done>>runCommand(
        r -> new JobProtocol.ReportProgress(id, 0, task, offset, step, generation, r)).reply();
  }

  static JobProtocol.CheckpointWritten checkpoint(Setup s, Path dir) {
    TestProbe<StatusReply<JobProtocol.CheckpointWritten>> reply = kit.createTestProbe();
    s.tk().runCommand(new JobProtocol.TakeCheckpoint(dir.toString(), reply.ref()));
    StatusReply<JobProtocol.CheckpointWritten> r = reply.receiveMessage(Duration.ofSeconds(20));
    assertTrue(r.isSuccess(), String.valueOf(r));
    return r.getValue();
  }

  @Test
  void checkpointHasEveryBlockCaptureOneStepAheadAndRecordsTheReaderOffsetsOfThatStep() throws Exception {
    Path dir = tmp.resolve("ckpt");
    Setup s = started(CheckpointSettings.OFF);
    // Reports of steps 6-8; the blocks are at 5, so the checkpoint is at 7.
    report(s, "a", 0, 10, 6, 0);
    report(s, "b", 1, 12, 6, 0);
    report(s, "a", 0, 20, 7, 0);
    report(s, "b", 1, 24, 7, 0);
    report(s, "a", 0, 30, 8, 0);

    JobProtocol.CheckpointWritten written = checkpoint(s, dir);
    assertEquals(new JobProtocol.CheckpointWritten("job-1", BLOCK_VERSION + 2, dir.toString()), written);
    for (String block : job().blocks()) {
      Object asked = s.blocks().receiveMessage();
      assertEquals(BLOCK_VERSION + 2, ((BlockProtocol.Checkpoint) asked).step(), "every block is asked for step 7");
    }
    Checkpoint c = CheckpointFiles.load(dir);
    assertEquals(7, c.step());
    assertEquals(List.of(new Checkpoint.ReaderOffset(0, 0, 20), new Checkpoint.ReaderOffset(0, 1, 24),
        new Checkpoint.ReaderOffset(1, 0, 0), new Checkpoint.ReaderOffset(1, 1, 0)), c.readerOffsets());
    // dense1.weight is 4x3 = 12 floats in blocks of 8: #0 holds [0, 8), #1 holds [8, 12).
    float[] w = c.model().parameter("dense1.weight").values();
    assertArrayEquals(value("dense1.weight", 1, 7, 0, 4), java.util.Arrays.copyOfRange(w, 8, 12));
    float[] slot = c.slotsOf("dense1.weight").values().get(0);
    assertArrayEquals(value("dense1.weight", 0, 7, 1, 8), java.util.Arrays.copyOfRange(slot, 0, 8));
    assertEquals(7, c.slotsOf("dense1.weight").updates());
    JobProtocol.JobStatus status = s.tk().getState().status();
    assertEquals(7, status.checkpointStep());
    assertEquals(30 + 24, status.examplesReported());
  }

  /** A local cluster closes its nodes once the job is settled: a checkpoint still asking the blocks would be cut off. */
  @Test
  void theJobIsNotSettledWhileACheckpointIsBeingTaken() throws Exception {
    Setup s = started(CheckpointSettings.OFF);
    TestProbe<StatusReply<JobProtocol.CheckpointWritten>> reply = kit.createTestProbe();
    s.tk().runCommand(new JobProtocol.TakeCheckpoint(tmp.resolve("ckpt").toString(), reply.ref()));
    // The blocks are at 5: the checkpoint is at 7, which it records once the trainers reported it.
    assertFalse(askStatus(s).settled(), "a checkpoint is being taken");
    report(s, "a", 0, 10, 6, 0);
    report(s, "b", 1, 12, 6, 0);
    report(s, "a", 0, 20, 7, 0);
    report(s, "b", 1, 24, 7, 0);
    assertTrue(reply.receiveMessage(Duration.ofSeconds(20)).isSuccess());
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!askStatus(s).settled()) {
      assertTrue(System.nanoTime() < deadline, "settled once the checkpoint committed and the blocks know the membership");
      Thread.sleep(20);
    }
  }

  static JobProtocol.JobStatus askStatus(Setup s) {
    return s.tk().<JobProtocol.JobStatus>runCommand(JobProtocol.GetStatus::new).reply();
  }

  @Test
  void aDirectoryTheCallerNamedThatHoldsFilesIsRefusedAndKeptAsItWas() throws Exception {
    Path dir = tmp.resolve("precious");
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Files.writeString(dir.resolve("notes.txt"), "my notes");
    Setup s = started(CheckpointSettings.OFF);
    TestProbe<StatusReply<JobProtocol.CheckpointWritten>> reply = kit.createTestProbe();
    s.tk().runCommand(new JobProtocol.TakeCheckpoint(dir.toString(), reply.ref()));
    StatusReply<JobProtocol.CheckpointWritten> r = reply.receiveMessage(Duration.ofSeconds(20));
    assertEquals("checkpoint failed: cannot write the checkpoint to " + dir + ": is not empty; refusing to overwrite"
        + " an existing model", r.getError().getMessage());
    assertEquals("my notes", java.nio.file.Files.readString(dir.resolve("notes.txt")));
    assertEquals(List.of(dir.resolve("notes.txt")), java.nio.file.Files.list(dir).toList());
    // Refused before any block was asked to capture.
    s.blocks().expectNoMessage(Duration.ofMillis(300));
  }

  @Test
  void blocksOfOneParameterThatAppliedDifferentCountsAreCheckpointedWithTheLargest() throws Exception {
    Path dir = tmp.resolve("ckpt");
    Setup s = started(CheckpointSettings.OFF, job(), Duration.ZERO, Set.of("dense1.weight#1"));
    checkpointAtStepSeven(s, dir);
    Checkpoint c = CheckpointFiles.load(dir);
    // At step 7, #0 applied 7 updates of 56 examples, #1 6 of 48.
    assertEquals(7, c.slotsOf("dense1.weight").updates());
    assertEquals(56, c.slotsOf("dense1.weight").examples());
    assertEquals(7, c.slotsOf("dense1.bias").updates());
  }

  @Test
  void aCheckpointAtAStepInsideABatchedReportRecordsTheOffsetOfThatStep() throws Exception {
    Path dir = tmp.resolve("ckpt");
    Setup s = started(CheckpointSettings.OFF);
    // The blocks are at 5, so the checkpoint is at 7: "a" reports steps 6 to 8 in one report, "b" 6 and 7.
    List<JobProtocol.StepOffset> a = List.of(new JobProtocol.StepOffset(6, 10), new JobProtocol.StepOffset(7, 20),
        new JobProtocol.StepOffset(8, 30));
    List<JobProtocol.StepOffset> b = List.of(new JobProtocol.StepOffset(6, 12), new JobProtocol.StepOffset(7, 24));
    assertTrue(s.tk().<StatusReply<Done>>runCommand(r -> new JobProtocol.ReportProgress("a", 0, 0, a, 0, r)).reply()
        .isSuccess());
    assertTrue(s.tk().<StatusReply<Done>>runCommand(r -> new JobProtocol.ReportProgress("b", 0, 1, b, 0, r)).reply()
        .isSuccess());
    assertEquals(7, checkpoint(s, dir).step());
    assertEquals(List.of(new Checkpoint.ReaderOffset(0, 0, 20), new Checkpoint.ReaderOffset(0, 1, 24),
        new Checkpoint.ReaderOffset(1, 0, 0), new Checkpoint.ReaderOffset(1, 1, 0)), CheckpointFiles.load(dir).readerOffsets());
  }

  @Test
  void rollbackReturnsEveryBlockThenTheOffsetsThenTheTrainersToTheCommittedCheckpoint() throws Exception {
    Path dir = tmp.resolve("ckpt");
    Setup s = started(new CheckpointSettings(0, dir, Duration.ofSeconds(20), PsSettings.Durability.CHECKPOINT));
    checkpointAtStepSeven(s, dir);
    report(s, "a", 0, 30, 8, 0);
    report(s, "b", 1, 36, 8, 0);
    assertEquals(66, s.tk().getState().status().examplesReported());

    s.tk().runCommand(new JobProtocol.RollBackToCheckpoint("test: a ps node is gone", -1, "a"));
    for (int i = 0; i < job().blocks().size(); i++) {
      BlockProtocol.RollBack r = (BlockProtocol.RollBack) s.blocks().receiveMessage();
      assertEquals(List.of(7L, 1L), List.of(r.step(), r.generation()));
    }
    assertEquals(new TrainerNotice.RollBack(7, 1), s.a().receiveMessage(Duration.ofSeconds(5)));
    assertEquals(new TrainerNotice.RollBack(7, 1), s.b().receiveMessage(Duration.ofSeconds(5)));
    JobProtocol.JobStatus status = s.tk().getState().status();
    assertEquals(1, status.generation());
    assertEquals(44, status.examplesReported(), "back to the examples of step 7");
    assertEquals(List.of(), status.leases(), "leases are handed out again");

    // A report of the abandoned timeline is refused, and its trainer told again.
    StatusReply<Done> old = report(s, "a", 0, 40, 9, 0);
    assertTrue(old.isError() && old.getError().getMessage().contains("generation"), String.valueOf(old));
    assertEquals(new TrainerNotice.RollBack(7, 1), s.a().receiveMessage(Duration.ofSeconds(5)));
    MasterTest.Setup ms = new MasterTest.Setup(s.tk(), null);
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 20), MasterTest.request(ms, "a"));
    assertEquals(new JobProtocol.Lease(0, 1, 50, 100, 24), MasterTest.request(ms, "b"));
    assertTrue(report(s, "a", 0, 30, 8, 1).isSuccess());

    // A trainer that found a block behind asks for a rollback: in an older generation it missed
    // the notice and is told again, no block rolls back; in the current one the block moved and
    // recovered its newest checkpoint, so the job rolls back.
    s.tk().runCommand(new JobProtocol.RollBackToCheckpoint("block behind", 0, "a"));
    assertEquals(new TrainerNotice.RollBack(7, 1), s.a().receiveMessage(Duration.ofSeconds(5)));
    s.blocks().expectNoMessage(Duration.ofMillis(300));
    s.tk().runCommand(new JobProtocol.RollBackToCheckpoint("block behind", 1, "a"));
    BlockProtocol.RollBack again = (BlockProtocol.RollBack) s.blocks().receiveMessage();
    assertEquals(List.of(7L, 2L), List.of(again.step(), again.generation()));
    for (int i = 1; i < job().blocks().size(); i++) s.blocks().receiveMessage();
    assertEquals(new TrainerNotice.RollBack(7, 2), s.a().receiveMessage(Duration.ofSeconds(5)));
    assertEquals(44, s.tk().getState().status().examplesReported());
    assertEquals(new JobProtocol.Lease(0, 0, 0, 50, 20), MasterTest.request(ms, "a"));
    assertTrue(report(s, "a", 0, 30, 8, 2).isSuccess());

    // Restarted, the master recovers generation 2 and the checkpoint at step 7 from its journal,
    // then rolls back once more (a restart in checkpoint durability always does), as generation 3.
    s.tk().restart();
    for (int i = 0; i < job().blocks().size(); i++) {
      BlockProtocol.RollBack r = (BlockProtocol.RollBack) s.blocks().receiveMessage();
      assertEquals(List.of(7L, 3L), List.of(r.step(), r.generation()));
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline && s.tk().getState().generation() < 3) MasterTest.sleep(20);
    assertEquals(3, s.tk().getState().generation());
    assertEquals(7, s.tk().getState().checkpoint().step());
    assertEquals(44, s.tk().getState().status().examplesReported(), "back to the examples of step 7");
  }

  @Test
  void aBlockSlowToRollBackIsAskedOnceRatherThanOnEveryTick() throws Exception {
    Path dir = tmp.resolve("ckpt");
    // Blocks answer after 1 s, ten of the master's 100 ms ticks; the ask times out after 2 s.
    Setup s = started(new CheckpointSettings(0, dir, Duration.ofSeconds(20), PsSettings.Durability.CHECKPOINT), job(),
        Duration.ofSeconds(1));
    checkpointAtStepSeven(s, dir);

    s.tk().runCommand(new JobProtocol.RollBackToCheckpoint("test: a ps node is gone", -1, "a"));
    for (int i = 0; i < job().blocks().size(); i++) {
      assertEquals(1L, ((BlockProtocol.RollBack) s.blocks().receiveMessage()).generation());
    }
    assertEquals(new TrainerNotice.RollBack(7, 1), s.a().receiveMessage(Duration.ofSeconds(5)));
    s.blocks().expectNoMessage(Duration.ofMillis(500));
  }

  @Test
  void aStepBoundedJobIsCheckpointedAtItsLastStepRatherThanPastIt() throws Exception {
    Path dir = tmp.resolve("ckpt");
    // The blocks are at 5 and the job ends at step 6: two steps ahead would never come. Only "a"
    // has reported step 6 yet: in sync mode that makes the job done, while the blocks still wait
    // for "b" to complete step 6, so the checkpoint is at 6, not at the blocks' 5.
    Setup s = started(new CheckpointSettings(0, dir, Duration.ofSeconds(4), PsSettings.Durability.EXACT), job(6));
    report(s, "a", 0, 10, 6, 0);
    report(s, "b", 1, 12, 5, 0);
    assertEquals(6, checkpoint(s, dir).step());
    assertEquals(List.of(new Checkpoint.ReaderOffset(0, 0, 10), new Checkpoint.ReaderOffset(0, 1, 12),
        new Checkpoint.ReaderOffset(1, 0, 0), new Checkpoint.ReaderOffset(1, 1, 0)), CheckpointFiles.load(dir).readerOffsets());
  }

  @Test
  void exactDurabilityDoesNotRollBack() {
    Setup s = started(CheckpointSettings.OFF);
    report(s, "a", 0, 10, 6, 0);
    s.tk().runCommand(new JobProtocol.RollBackToCheckpoint("test", -1, "a"));
    s.a().expectNoMessage(Duration.ofMillis(300));
    assertEquals(0, s.tk().getState().generation());
    assertEquals(10, s.tk().getState().status().examplesReported());
  }
}
