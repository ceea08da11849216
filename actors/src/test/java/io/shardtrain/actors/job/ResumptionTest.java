package io.shardtrain.actors.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ps.BlockEvents;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.persistence.model.Checkpoint;
import io.shardtrain.persistence.model.CheckpointFiles;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResumptionTest {
  @TempDir
  Path tmp;

  /** 100 examples over 2 trainers (tasks of 50), batch 10, 2 epochs, momentum (one slot), blocks of 5 floats. */
  static JobSpec job(BlockSpec.Mode mode, int trainers, List<Integer> hidden, String optimizer, int epochs, long steps) {
    return new JobSpec("resumed", "test", 100, 4, 2, hidden, "relu", 7, mode, trainers, 10, epochs, steps, optimizer,
        0.1f, "constant", 0f, -1, 5, List.of("unused#0"), null);
  }

  static JobSpec job() {
    return sync(2, List.of(3), "momentum", 2, 0);
  }

  /**
   * A checkpoint of {@link #job()} at step 7, one epoch done, with every value and slot distinct,
   * 140 examples applied, and tasks 0 and 1 of epoch 1 read up to 20 and 30.
   */
  Path checkpoint() throws Exception {
    return checkpoint(List.of(new Checkpoint.ReaderOffset(1, 0, 20), new Checkpoint.ReaderOffset(1, 1, 30)), 1);
  }

  /** The same with other reader offsets and epochs done. */
  Path checkpoint(List<Checkpoint.ReaderOffset> offsets, int epochsDone) throws Exception {
    JobSpec job = job();
    Mlp model = job.newModel(CpuBackend.create(1));
    List<Checkpoint.Slots> slots = new ArrayList<>();
    int k = 0;
    for (Parameter p : model.parameters()) {
      float[] v = p.value().data();
      float[] slot = new float[v.length];
      for (int i = 0; i < v.length; i++) {
        v[i] = k * 0.25f;
        slot[i] = -k * 0.5f;
        k++;
      }
      slots.add(new Checkpoint.Slots(p.name(), 7, 140, List.of(slot)));
    }
    Checkpoint c = new Checkpoint(job.snapshot(model, 7), slots, offsets, epochsDone);
    Path dir = tmp.resolve("step-7-" + offsets.hashCode());
    CheckpointFiles.save(dir, c, ModelFiles.IfExists.FAIL);
    return dir;
  }

  static Resumption load(Path dir, JobSpec job) {
    return Resumption.load(dir, job, job.newModel(CpuBackend.create(1)), OptimizerSpec.parse(job.optimizer()));
  }

  /** Why {@link #load} refuses: its message, less the "cannot resume from DIR: " every refusal starts with. */
  static String refusal(Path dir, JobSpec job) {
    String m = assertThrows(IllegalArgumentException.class, () -> load(dir, job)).getMessage();
    String prefix = "cannot resume from " + dir + ": ";
    assertTrue(m.startsWith(prefix), m);
    return m.substring(prefix.length());
  }

  static JobSpec sync(int trainers, List<Integer> hidden, String optimizer, int epochs, long steps) {
    return job(BlockSpec.Mode.SYNC, trainers, hidden, optimizer, epochs, steps);
  }

  @Test
  void theMasterStartsFromTheCheckpointsOffsetsWithTheExamplesTrainedByItsStep() throws Exception {
    Path dir = checkpoint();
    JobProtocol.ResumePoint p = load(dir, job()).point();
    assertEquals(7, p.step());
    assertEquals(dir.toAbsolutePath().toString(), p.dir());
    assertEquals(1, p.epochsDone());
    // One whole epoch, then 20 + 30 of the second.
    assertEquals(150, p.examples());
    assertEquals(List.of(new JobProtocol.TaskOffset(1, 0, 20), new JobProtocol.TaskOffset(1, 1, 30)), p.offsets());
  }

  @Test
  void eachBlockResumesWithItsSliceOfTheValuesAndSlotsAndItsParametersCounts() throws Exception {
    JobSpec job = job();
    Mlp model = job.newModel(CpuBackend.create(1));
    Resumption r = Resumption.load(checkpoint(), job, model, OptimizerSpec.parse("momentum"));
    // dense1.weight is 4 x 3 = 12 floats: its second block of 5 holds values 5..9.
    BlockSlice slice = job.layout(model).get(1);
    // Blocks are named in the job's namespace; the checkpoint is matched by parameter name and offset.
    assertEquals(List.of("resumed/dense1.weight#1", "dense1.weight", 1, 5, 5), List.of(slice.entityId(),
        slice.parameter(), slice.index(), slice.offset(), slice.length()));
    BlockEvents.Resumed b = r.block(BlockSpec.of(slice, OptimizerSpec.parse("momentum"), "constant", 0.1f,
        BlockSpec.Mode.SYNC, -1));
    assertArrayEquals(new float[] {1.25f, 1.5f, 1.75f, 2f, 2.25f}, b.values());
    assertEquals(1, b.slots().length);
    assertArrayEquals(new float[] {-2.5f, -3f, -3.5f, -4f, -4.5f}, b.slots()[0]);
    assertEquals(List.of(7L, 7L, 140L), List.of(b.step(), b.updates(), b.examples()));
    // The job's model holds the checkpoint's values, as a plan's model does.
    assertEquals(0.25f * 13, model.parameters().get(1).value().data()[1]);
  }

  @Test
  void aCheckpointWithoutExamplesPerParameterResumesItsBlocksWithTheMastersExamples() throws Exception {
    Path dir = checkpoint();
    Path file = dir.resolve(CheckpointFiles.FILE);
    Files.writeString(file, Files.readString(file).replace(", \"examples\": 140", ""));
    JobSpec job = job();
    Mlp model = job.newModel(CpuBackend.create(1));
    Resumption r = Resumption.load(dir, job, model, OptimizerSpec.parse("momentum"));
    BlockSpec spec = BlockSpec.of(job.layout(model).get(0), OptimizerSpec.parse("momentum"), "constant", 0.1f,
        BlockSpec.Mode.SYNC, -1);
    assertEquals(150, r.block(spec).examples());
  }

  @Test
  void aCheckpointOfAnotherModelShapeIsRefusedNamingTheParameter() throws Exception {
    Path dir = checkpoint();
    assertEquals("it holds another model than the job's: parameter dense1.weight has shape [4, 3] in the saved"
        + " model but [4, 5] in the model", refusal(dir, sync(2, List.of(5), "momentum", 2, 0)));
  }

  @Test
  void aCheckpointOfAJobOfAnotherSeedIsRefusedSinceItsOffsetsAreInAnotherDataOrder() throws Exception {
    Path dir = checkpoint();
    JobSpec j = job();
    JobSpec otherSeed = new JobSpec(j.jobId(), j.dataset(), j.trainExamples(), j.inputDim(), j.classes(), j.hidden(),
        j.activation(), 8, j.mode(), j.trainers(), j.batch(), j.epochs(), j.steps(), j.optimizer(), j.lr(),
        j.lrSchedule(), j.weightDecay(), j.maxStaleness(), j.blockSize(), j.blocks(), null);
    assertEquals("it was written by a job of seed 7 and this job's is 8: its reader offsets are positions in the"
        + " order that seed shuffles the data into (resume with seed 7)", refusal(dir, otherSeed));
    assertEquals(7, load(dir, j).point().step(), "the same seed resumes");
  }

  @Test
  void theNextEpochsUntouchedTasksDoNotKeepAJobOfFewerEpochsFromResumingButReadOnesDo() throws Exception {
    JobSpec oneEpoch = sync(2, List.of(3), "momentum", 1, 0);
    Path opened = checkpoint(List.of(new Checkpoint.ReaderOffset(0, 0, 20), new Checkpoint.ReaderOffset(0, 1, 30),
        new Checkpoint.ReaderOffset(1, 0, 0), new Checkpoint.ReaderOffset(1, 1, 0)), 0);
    JobProtocol.ResumePoint point = load(opened, oneEpoch).point();
    assertEquals(50, point.examples());
    assertEquals(List.of(new JobProtocol.TaskOffset(0, 0, 20), new JobProtocol.TaskOffset(0, 1, 30)), point.offsets());
    Path read = checkpoint(List.of(new Checkpoint.ReaderOffset(0, 0, 50), new Checkpoint.ReaderOffset(0, 1, 30),
        new Checkpoint.ReaderOffset(1, 0, 5), new Checkpoint.ReaderOffset(1, 1, 0)), 0);
    assertEquals("it read 5 examples of task 0 in epoch 2 (counting from 1) but the job has 1 epoch",
        refusal(read, oneEpoch));
  }

  @Test
  void aCheckpointOfAnotherUpdateRuleIsRefusedEvenWithAsManySlotsButNotOneOfTheSameRule() throws Exception {
    Path dir = checkpoint();
    assertEquals("its optimizer slots were written by momentum and the job's optimizer is adagrad, whose update would"
        + " read them as its own (resume with optimizer momentum)", refusal(dir, sync(2, List.of(3), "adagrad", 2, 0)));
    assertEquals("its optimizer slots were written by momentum and the job's optimizer is adam, whose update would"
        + " read them as its own (resume with optimizer momentum)", refusal(dir, sync(2, List.of(3), "adam", 2, 0)));
    assertEquals(7, load(dir, sync(2, List.of(3), "nesterov", 2, 0)).point().step(), "one velocity, as momentum's");
    assertEquals(null, Resumption.optimizerRefusal(null, "adagrad"), "a checkpoint that does not say: slots decide");
    assertEquals(null, Resumption.optimizerRefusal("adamw", "adam"));
  }

  @Test
  void aCheckpointThatDoesNotNameItsOptimizerIsRefusedWhenItsSlotsDoNotFit() throws Exception {
    Checkpoint named = CheckpointFiles.load(checkpoint());
    java.util.Map<String, String> description = new java.util.LinkedHashMap<>(named.model().description());
    description.remove("optimizer");
    Checkpoint unnamed = new Checkpoint(new ModelSnapshot(description, named.model().version(),
        named.model().parameters()), named.slots(), named.readerOffsets(), named.epochsDone());
    Path dir = tmp.resolve("unnamed");
    CheckpointFiles.save(dir, unnamed, ModelFiles.IfExists.FAIL);
    assertEquals("it holds 1 optimizer slots for dense1.weight but the job's optimizer adam keeps 2 (was it written"
        + " by a job with another optimizer?)", refusal(dir, sync(2, List.of(3), "adam", 2, 0)));
  }

  @Test
  void anAsyncOrAllReduceJobIsRefusedBeforeTheCheckpointIsRead() {
    Path dir = tmp.resolve("nothing-here");
    for (BlockSpec.Mode mode : List.of(BlockSpec.Mode.ASYNC, BlockSpec.Mode.ALLREDUCE)) {
      assertEquals("only a sync job resumes (one global step), this job is "
          + mode.name().toLowerCase(java.util.Locale.ROOT), refusal(dir, job(mode, 2, List.of(3), "momentum", 2, 0)));
    }
  }

  @Test
  void aMissingOrCorruptSlotFileIsRefusedNamingIt() throws Exception {
    Path dir = checkpoint();
    Path slot = dir.resolve("dense2.bias.slot0.f32");
    byte[] bytes = Files.readAllBytes(slot);
    bytes[1] ^= 4;
    Files.write(slot, bytes);
    String corrupt = refusal(dir, job());
    assertTrue(corrupt.contains("dense2.bias.slot0.f32") && corrupt.contains("SHA-256")
        && corrupt.contains("checkpoint.json says"), corrupt);
    Files.write(slot, java.util.Arrays.copyOf(bytes, bytes.length + 1));
    String longer = refusal(dir, job());
    assertTrue(longer.endsWith("parameter file dense2.bias.slot0.f32 has " + (bytes.length + 1) + " bytes,"
        + " checkpoint.json says " + bytes.length), longer);
    Files.delete(slot);
    String missing = refusal(dir, job());
    assertTrue(missing.contains("dense2.bias.slot0.f32") && missing.contains("listed in checkpoint.json"), missing);
  }

  @Test
  void aSavedModelIsNotACheckpoint() throws Exception {
    JobSpec job = job();
    Path dir = tmp.resolve("model");
    ModelFiles.save(dir, job.snapshot(job.newModel(CpuBackend.create(1)), 7));
    assertEquals(dir + " is a model but not a checkpoint: it has no " + CheckpointFiles.FILE, refusal(dir, job));
  }

  @Test
  void whatCanBeCheckedBeforeAClusterStartsIsRefusedWithLoadsWords() throws Exception {
    JobSpec job = job();
    Path model = tmp.resolve("model");
    ModelFiles.save(model, job.snapshot(job.newModel(CpuBackend.create(1)), 7));
    Path nothing = tmp.resolve("nothing-here");
    for (Path dir : List.of(model, nothing)) {
      String before = assertThrows(IllegalArgumentException.class,
          () -> Resumption.checkBeforeStart(dir, BlockSpec.Mode.SYNC)).getMessage();
      assertEquals("cannot resume from " + dir + ": " + refusal(dir, job), before);
    }
    JobSpec async = job(BlockSpec.Mode.ASYNC, 2, List.of(3), "momentum", 2, 0);
    String mode = assertThrows(IllegalArgumentException.class,
        () -> Resumption.checkBeforeStart(nothing, BlockSpec.Mode.ASYNC)).getMessage();
    assertEquals("cannot resume from " + nothing + ": " + refusal(nothing, async), mode);
    Resumption.checkBeforeStart(checkpoint(), BlockSpec.Mode.SYNC);
  }

  @Test
  void aCheckpointOfAnotherTrainerCountIsRefused() throws Exception {
    Path dir = checkpoint();
    String e = refusal(dir, sync(4, List.of(3), "momentum", 2, 0));
    assertEquals("its reader offset 30 of task 1 of epoch 1 does not fit the job's"
        + " 4 tasks of 25 examples (100 examples over 4 trainers): was it written by a job of another data set or"
        + " trainer count?", e);
    String fewer = refusal(dir, sync(1, List.of(3), "momentum", 2, 0));
    assertTrue(fewer.contains("task 1 of epoch 1 does not fit the job's 1 tasks"), fewer);
    String more = refusal(dir, sync(3, List.of(3), "momentum", 2, 0));
    assertEquals("its reader offsets of epoch 1 name tasks [0, 1] but the job cuts an"
        + " epoch into 3 tasks (3 trainers): was it written by a job of another trainer count?", more);
  }

  @Test
  void aJobWithNothingLeftAfterTheCheckpointIsRefused() throws Exception {
    Path dir = checkpoint();
    assertEquals("it was taken at step 7 and the job ends at step 7: nothing is left",
        refusal(dir, sync(2, List.of(3), "momentum", 0, 7)));
    assertEquals("all 1 epochs of the job were done at step 7: nothing is left",
        refusal(dir, sync(2, List.of(3), "momentum", 1, 0)));
    // A step-bounded job continues past the checkpoint's step.
    assertEquals(7, load(dir, sync(2, List.of(3), "momentum", 0, 8)).point().step());
  }
}
