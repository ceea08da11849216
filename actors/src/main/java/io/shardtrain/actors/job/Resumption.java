package io.shardtrain.actors.job;

import io.shardtrain.actors.ps.BlockEvents;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.persistence.model.Checkpoint;
import io.shardtrain.persistence.model.CheckpointFiles;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelParameters;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A sync job resumed from a checkpoint directory (docs/MODEL-FORMAT.md, "Checkpoints"): its blocks
 * start from the checkpoint's values, optimizer slots, update counts and examples applied, and its
 * master from the checkpoint's reader offsets ({@link #point}). The checkpoint is matched to the
 * job by parameter name and offset within the parameter, never by block id, so the job may cut
 * its parameters into other blocks. Everything is checked when it is made, before anything starts.
 */
public record Resumption(Checkpoint checkpoint, JobProtocol.ResumePoint point) {

  /**
   * What {@link #load} can check before a cluster starts or data loads, from the files' names and
   * the manifest alone: a job of {@code mode} resumes, and {@code dir} holds a model's manifest and
   * a checkpoint file.
   *
   * @throws IllegalArgumentException naming the directory and the problem, as {@link #load} would
   */
  public static void checkBeforeStart(Path dir, BlockSpec.Mode mode) {
    String where = "cannot resume from " + dir + ": ";
    checkMode(where, mode);
    try {
      ModelFiles.readManifest(dir);
      CheckpointFiles.requireCheckpoint(dir);
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(where + e.getMessage(), e);
    }
  }

  private static void checkMode(String where, BlockSpec.Mode mode) {
    if (mode != BlockSpec.Mode.SYNC) {
      throw new IllegalArgumentException(where + "only a sync job resumes (one global step), this job is "
          + mode.name().toLowerCase(java.util.Locale.ROOT));
    }
  }

  /**
   * Loads the checkpoint in {@code dir} for {@code job} (trained with {@code optimizer}) and writes
   * its values into {@code model}, the job's model.
   *
   * @throws IllegalArgumentException naming the directory and the problem: a missing or corrupt
   *     file, a model of another shape, another optimizer's slots, an async or click-through job,
   *     reader offsets the job's data tasks do not have, a job with no step left
   */
  public static Resumption load(Path dir, JobSpec job, Mlp model, OptimizerSpec optimizer) {
    String where = "cannot resume from " + dir + ": ";
    if (job.ctr() != null) throw new IllegalArgumentException(where + "a click-through job does not resume");
    checkMode(where, job.mode());
    Checkpoint c;
    try {
      c = CheckpointFiles.load(dir);
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(where + e.getMessage(), e);
    }
    try {
      ModelParameters.copyInto(c.model(), model.parameters());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + "it holds another model than the job's: " + e.getMessage(), e);
    }
    String refusal = refusal(c, job, model, optimizer.create().slotCount());
    if (refusal != null) throw new IllegalArgumentException(where + refusal);
    List<JobProtocol.TaskOffset> offsets = new ArrayList<>();
    long examples = (long) c.epochsDone() * job.trainExamples();
    for (Checkpoint.ReaderOffset o : c.readerOffsets()) {
      // Untouched tasks of an epoch past the job's last (refusal: only those are left there).
      if (job.boundedByEpochs() && o.epoch() >= job.epochs()) continue;
      offsets.add(new JobProtocol.TaskOffset(o.epoch(), o.task(), o.offset()));
      if (o.epoch() >= c.epochsDone()) examples += o.offset();
    }
    return new Resumption(c, new JobProtocol.ResumePoint(c.step(), dir.toAbsolutePath().toString(), c.epochsDone(),
        examples, offsets));
  }

  /** Why {@code c}, whose parameters are {@code model}'s, cannot resume {@code job}, or null. */
  static String refusal(Checkpoint c, JobSpec job, Mlp model, int slotCount) {
    String optimizer = optimizerRefusal(c.model().description().get("optimizer"), job.optimizer());
    if (optimizer != null) return optimizer;
    for (Parameter p : model.parameters()) {
      Checkpoint.Slots s = c.slotsOf(p.name());
      int held = s == null ? 0 : s.values().size();
      if (s == null || held != slotCount) {
        return "it holds " + held + " optimizer slots for " + p.name() + " but the job's optimizer " + job.optimizer()
            + " keeps " + slotCount + " (was it written by a job with another optimizer?)";
      }
    }
    String seed = c.model().description().get("seed");
    if (seed != null && !seed.equals(String.valueOf(job.seed()))) {
      return "it was written by a job of seed " + seed + " and this job's is " + job.seed() + ": its reader offsets"
          + " are positions in the order that seed shuffles the data into (resume with seed " + seed + ")";
    }
    if (c.step() < 1) return "it was taken at step 0, before any training: start the job afresh instead";
    if (job.steps() > 0 && c.step() >= job.steps()) {
      return "it was taken at step " + c.step() + " and the job ends at step " + job.steps() + ": nothing is left";
    }
    if (job.boundedByEpochs() && c.epochsDone() >= job.epochs()) {
      return "all " + job.epochs() + " epochs of the job were done at step " + c.step() + ": nothing is left";
    }
    return offsetsRefusal(c, job);
  }

  /**
   * Why slots written by optimizer {@code writer} (null: a checkpoint that does not say) cannot go on
   * with the job's {@code optimizer}, or null: the same update rule may change its settings (momentum
   * and nesterov keep one velocity, adam and adamw the same moments), another rule may not, even
   * with as many slots (nesterov's velocity read as adagrad's sum of squares trains to NaN).
   */
  static String optimizerRefusal(String writer, String optimizer) {
    if (writer == null) return null;
    OptimizerSpec.Kind written;
    try {
      written = OptimizerSpec.parse(writer).kind();
    } catch (IllegalArgumentException e) {
      return "its optimizer slots were written by '" + writer + "', an optimizer this version does not know";
    }
    if (written == OptimizerSpec.parse(optimizer).kind()) return null;
    return "its optimizer slots were written by " + writer + " and the job's optimizer is " + optimizer
        + ", whose update would read them as its own (resume with optimizer " + writer + ")";
  }

  /**
   * The master cuts each epoch into one task per trainer: the checkpoint's offsets must name exactly
   * those tasks of each epoch it holds, within their lengths (another trainer count or data set
   * cuts other tasks).
   */
  private static String offsetsRefusal(Checkpoint c, JobSpec job) {
    int n = job.trainExamples();
    int size = (n + job.trainers() - 1) / job.trainers();
    int tasks = (n + size - 1) / size;
    Map<Integer, TreeSet<Integer>> byEpoch = new TreeMap<>();
    for (Checkpoint.ReaderOffset o : c.readerOffsets()) {
      if (job.boundedByEpochs() && o.epoch() >= job.epochs()) {
        // The master opens the next epoch's tasks ahead: untouched, they hold nothing this job lacks.
        if (o.offset() == 0) continue;
        return "it read " + o.offset() + " examples of task " + o.task() + " in epoch " + (o.epoch() + 1)
            + " (counting from 1) but the job has " + job.epochs() + (job.epochs() == 1 ? " epoch" : " epochs");
      }
      long length = Math.min(n, (long) (o.task() + 1) * size) - (long) o.task() * size;
      if (o.task() >= tasks || o.offset() > length) {
        return "its reader offset " + o.offset() + " of task " + o.task() + " of epoch " + o.epoch() + " does not fit"
            + " the job's " + tasks + " tasks of " + size + " examples (" + n + " examples over " + job.trainers()
            + " trainers): was it written by a job of another data set or trainer count?";
      }
      byEpoch.computeIfAbsent(o.epoch(), e -> new TreeSet<>()).add(o.task());
    }
    for (Map.Entry<Integer, TreeSet<Integer>> e : byEpoch.entrySet()) {
      if (e.getValue().size() != tasks) {
        return "its reader offsets of epoch " + e.getKey() + " name tasks " + e.getValue() + " but the job cuts an"
            + " epoch into " + tasks + " tasks (" + job.trainers() + " trainers): was it written by a job of another"
            + " trainer count?";
      }
    }
    return null;
  }

  /**
   * The state block {@code spec} resumes with: its slice of the checkpoint's values and slots, and
   * its parameter's update count and examples (the master's examples where the checkpoint has none).
   */
  public BlockEvents.Resumed block(BlockSpec spec) {
    float[] values = slice(checkpoint.model().parameter(spec.parameter()).values(), spec);
    Checkpoint.Slots s = checkpoint.slotsOf(spec.parameter());
    float[][] slots = new float[s.values().size()][];
    for (int k = 0; k < slots.length; k++) slots[k] = slice(s.values().get(k), spec);
    long examples = s.examples() >= 0 ? s.examples() : point.examples();
    return new BlockEvents.Resumed(spec, checkpoint.step(), values, slots, s.updates(), examples);
  }

  private static float[] slice(float[] whole, BlockSpec spec) {
    float[] out = new float[spec.length()];
    System.arraycopy(whole, spec.offset(), out, 0, spec.length());
    return out;
  }
}
