package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.*;
import io.shardtrain.actors.ps.BlockProtocol.*;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The block's state, owned by the entity. {@code values} is copy-on-write: an update writes a new
 * array, so the array of a version never changes once published and pulls and snapshots of that
 * version share it (one copy per update, not one per pull). The optimizer slots change in place,
 * so snapshots copy them (the snapshot store serializes asynchronously).
 */
public final class BlockState {

  /** A sync contribution to the pending step; weight 0 and no values when it was skipped. */
  public record Contribution(String trainerId, float weight, float[] values) {}

  /** A held checkpoint: values, optimizer slots and update count at one version. Arrays are never mutated. */
  public record Held(float[] values, float[][] slots, long updates) {}

  BlockSpec spec;
  float[] values;
  OptimizerState optimizerState;
  long version;
  long membershipEpoch;
  List<String> members = new ArrayList<>();
  List<Contribution> pending = new ArrayList<>();
  TreeMap<String, Long> lastSteps = new TreeMap<>();
  /** Per data task ({@link #taskKey}), how far its examples reached this block. */
  TreeMap<Long, TaskProgress> taskMarks = new TreeMap<>();
  long examplesApplied;
  TreeMap<Long, Held> checkpoints = new TreeMap<>();
  long generation;
  private Optimizer optimizer;
  private LearningRateSchedule schedule;

  BlockState() {}

  static BlockState restore(BlockSpec spec, float[] values, float[][] slots, long updates, long version,
      long membershipEpoch, List<String> members, List<Contribution> pending, Map<String, Long> lastSteps,
      long examplesApplied) {
    BlockState s = new BlockState();
    s.spec = spec;
    if (spec != null) {
      if (values.length != spec.length()) {
        throw new IllegalArgumentException("state of block " + spec.entityId() + " has " + values.length
            + " values, its spec says " + spec.length());
      }
      s.values = values;
      s.optimizerState = OptimizerState.of(spec.length(), slots, updates);
    }
    s.version = version;
    s.membershipEpoch = membershipEpoch;
    s.members = new ArrayList<>(members);
    s.pending = new ArrayList<>(pending);
    s.lastSteps = new TreeMap<>(lastSteps);
    s.examplesApplied = examplesApplied;
    return s;
  }

  /** {@link #restore} plus the held checkpoints and the rollback generation. */
  static BlockState restore(BlockState s, Map<Long, Held> checkpoints, long generation) {
    s.checkpoints = new TreeMap<>(checkpoints);
    s.generation = generation;
    return s;
  }

  /** {@link #restore} plus the task marks (by {@link #taskKey}). */
  static BlockState restoreMarks(BlockState s, Map<Long, TaskProgress> marks) {
    s.taskMarks = new TreeMap<>(marks);
    return s;
  }

  static long taskKey(int epoch, int task) {
    return ((long) epoch << 32) | (task & 0xFFFFFFFFL);
  }

  public boolean isInitialised() {
    return spec != null;
  }

  /** The spec, or null before {@link Initialize}. */
  public BlockSpec spec() {
    return spec;
  }

  public long version() {
    return version;
  }

  /** Optimizer updates applied (differs from the sync version only when a whole step was skipped). */
  public long updates() {
    return optimizerState == null ? 0 : optimizerState.updates();
  }

  public long membershipEpoch() {
    return membershipEpoch;
  }

  public List<String> members() {
    return List.copyOf(members);
  }

  /** A copy of the values (empty before initialisation). */
  public float[] values() {
    return values == null ? new float[0] : values.clone();
  }

  /** A deep copy of the optimizer slots. */
  public float[][] slots() {
    return optimizerState == null ? new float[0][] : optimizerState.copy().slots();
  }

  /** The sync contributions to the pending step, in arrival order. */
  public List<Contribution> pending() {
    return List.copyOf(pending);
  }

  /** Sync: the examples behind the applied steps (the sum of their contributions' weights). */
  public long examplesApplied() {
    return examplesApplied;
  }

  /** How far the examples of task {@code task} of epoch {@code epoch} reached this block. */
  public TaskProgress taskProgress(int epoch, int task) {
    return taskMarks.getOrDefault(taskKey(epoch, task), new TaskProgress(0, 0));
  }

  /** The task marks by {@link #taskKey}, a copy. */
  TreeMap<Long, TaskProgress> taskMarks() {
    return new TreeMap<>(taskMarks);
  }

  /** Per trainer, the last step it pushed that the block accepted. */
  public Map<String, Long> lastSteps() {
    return new TreeMap<>(lastSteps);
  }

  /** The versions of the held checkpoints, oldest first. */
  public List<Long> checkpointSteps() {
    return List.copyOf(checkpoints.keySet());
  }

  /** The held checkpoint at {@code step}, or null. */
  public Held checkpoint(long step) {
    return checkpoints.get(step);
  }

  /** Pushes of an older generation than this are refused (it counts rollbacks). */
  public long generation() {
    return generation;
  }

  /** A deep copy; the values and contribution arrays are never mutated, so they are shared. */
  public BlockState copy() {
    BlockState c = new BlockState();
    c.spec = spec;
    c.values = values;
    c.optimizerState = optimizerState == null ? null : optimizerState.copy();
    c.version = version;
    c.membershipEpoch = membershipEpoch;
    c.members = new ArrayList<>(members);
    c.pending = new ArrayList<>(pending);
    c.lastSteps = new TreeMap<>(lastSteps);
    c.taskMarks = taskMarks();
    c.examplesApplied = examplesApplied;
    c.checkpoints = new TreeMap<>(checkpoints);
    c.generation = generation;
    return c;
  }

  /**
   * Checkpoint durability's snapshot: the newest held checkpoint as the live state, since the
   * steps applied after it were never journaled and a recovery must land on a checkpoint.
   */
  BlockState asOfNewestCheckpoint() {
    BlockState c = copy();
    if (checkpoints.isEmpty()) return c;
    Map.Entry<Long, Held> newest = checkpoints.lastEntry();
    c.restoreCheckpoint(newest.getKey(), newest.getValue(), true);
    return c;
  }

  /** Values, slots, updates and version from {@code h}; {@code dropPending}: also forget the contributions held. */
  private void restoreCheckpoint(long step, Held h, boolean dropPending) {
    values = h.values(); // copy-on-write: never changed in place
    float[][] slots = new float[h.slots().length][];
    for (int i = 0; i < slots.length; i++) slots[i] = h.slots()[i].clone();
    optimizerState = OptimizerState.of(spec.length(), slots, h.updates());
    version = step;
    if (dropPending) {
      pending = new ArrayList<>();
      lastSteps = new TreeMap<>();
      // The master's reader offsets go back to the checkpoint's too.
      taskMarks = new TreeMap<>();
    }
  }

  /** The live values (shared: copy-on-write), a copy of the slots, and the update count. */
  Held capture() {
    return new Held(values, optimizerState.copy().slots(), optimizerState.updates());
  }

  boolean isSync() {
    return spec != null && spec.mode() == BlockSpec.Mode.SYNC;
  }

  boolean hasContributed(String trainerId) {
    for (Contribution c : pending) {
      if (c.trainerId().equals(trainerId)) return true;
    }
    return false;
  }

  /** Members of the current membership that have not contributed to the pending step. */
  List<String> missing(String alsoContributed) {
    List<String> out = new ArrayList<>();
    for (String m : members) {
      if (!m.equals(alsoContributed) && !hasContributed(m)) out.add(m);
    }
    return out;
  }

  /**
   * Whether the pending step (plus a contribution of {@code extra}, if not null) is complete
   * under {@code memberSet}: a membership was received and all its trainers contributed.
   */
  boolean barrierComplete(long epoch, List<String> memberSet, String extra) {
    if (epoch <= 0 || (pending.isEmpty() && extra == null)) return false;
    for (String m : memberSet) {
      if (!m.equals(extra) && !hasContributed(m)) return false;
    }
    return true;
  }

  // Event handlers: deterministic, so replay rebuilds the same floats.

  BlockState onInitialized(Initialized e) {
    spec = e.spec();
    // Copy-on-write: the event's array is never changed, so the state may share it.
    values = e.values();
    optimizerState = OptimizerState.create(optimizer(), spec.length());
    version = 0;
    examplesApplied = 0;
    pending.clear();
    lastSteps.clear();
    taskMarks.clear();
    checkpoints.clear();
    // The initial values are checkpoint 0: a job that fails before its first checkpoint rolls back to them.
    if (spec.mode() == BlockSpec.Mode.SYNC) checkpoints.put(0L, capture());
    return this;
  }

  BlockState onGradientReceived(GradientReceived e) {
    pending.add(new Contribution(e.trainerId(), e.weight(), e.values()));
    lastSteps.put(e.trainerId(), e.step());
    mark(e.mark(), e.step());
    return this;
  }

  BlockState onGradientSkipped(GradientSkipped e) {
    pending.add(new Contribution(e.trainerId(), 0f, new float[0]));
    lastSteps.put(e.trainerId(), e.step());
    // Dropped by policy, but done with: the trainer moves past these examples.
    mark(e.mark(), e.step());
    return this;
  }

  /**
   * Records how far a task's examples reached this block. Marks of epochs two or more before
   * {@code m}'s are dropped: the master opens an epoch only once the one two before it finished.
   */
  private void mark(TaskMark m, long step) {
    if (m == null) return;
    long key = taskKey(m.epoch(), m.task());
    TaskProgress old = taskMarks.get(key);
    if (old == null || m.offset() > old.offset()) taskMarks.put(key, new TaskProgress(m.offset(), step));
    taskMarks.headMap(taskKey(m.epoch() - 1, 0)).clear();
  }

  BlockState onStepApplied(StepApplied e) {
    float[] mean = new float[spec.length()];
    float total = 0f;
    // Arrival order = journal order, so the sum replays bit for bit.
    for (Contribution c : pending) {
      if (c.weight() <= 0f) continue;
      float w = c.weight();
      float[] g = c.values();
      total += w;
      examplesApplied += Math.round(w);
      for (int j = 0; j < mean.length; j++) {
        mean[j] += w * g[j];
      }
    }
    if (total > 0f) {
      for (int j = 0; j < mean.length; j++) {
        mean[j] /= total;
      }
      values = stepped(mean);
    }
    version = e.step();
    pending.clear();
    return this;
  }

  BlockState onGradientApplied(GradientApplied e) {
    values = stepped(e.values());
    version++;
    lastSteps.put(e.trainerId(), e.step());
    mark(e.mark(), e.step());
    return this;
  }

  /** The values after one optimizer step on {@code gradient}, in a new array (copy-on-write). */
  private float[] stepped(float[] gradient) {
    float[] next = values.clone();
    optimizerState.step(optimizer(), schedule(), next, gradient);
    return next;
  }

  BlockState onMembershipUpdated(MembershipUpdated e) {
    membershipEpoch = e.epoch();
    members = new ArrayList<>(e.trainers());
    return this;
  }

  BlockState onCheckpointTaken(CheckpointTaken e) {
    Held h = new Held(e.values(), e.slots(), e.updates());
    checkpoints.headMap(e.keepFrom()).clear();
    checkpoints.put(e.step(), h);
    // Live: the same values (captured from them), and contributions to the next step stay. Replay:
    // the journal holds no gradients, so this is where the block resumes.
    restoreCheckpoint(e.step(), h, false);
    return this;
  }

  BlockState onRolledBackTo(RolledBackTo e) {
    Held h = checkpoints.get(e.step());
    if (h == null) throw new IllegalStateException("rollback to step " + e.step() + " without its checkpoint");
    checkpoints.tailMap(e.step(), false).clear();
    restoreCheckpoint(e.step(), h, true);
    generation = e.generation();
    return this;
  }

  /** Applies {@code e} directly, as the event handler would (for what checkpoint durability does not journal). */
  BlockState apply(Event e) {
    if (e instanceof GradientReceived g) return onGradientReceived(g);
    if (e instanceof GradientSkipped g) return onGradientSkipped(g);
    if (e instanceof StepApplied a) return onStepApplied(a);
    if (e instanceof GradientApplied a) return onGradientApplied(a);
    if (e instanceof MembershipUpdated m) return onMembershipUpdated(m);
    throw new IllegalArgumentException("not applied in memory: " + e);
  }

  private Optimizer optimizer() {
    if (optimizer == null) optimizer = spec.optimizer().create();
    return optimizer;
  }

  private LearningRateSchedule schedule() {
    if (schedule == null) schedule = spec.schedule();
    return schedule;
  }

  @Override
  public String toString() {
    return "BlockState[" + (spec == null ? "uninitialised" : spec.entityId()) + ", version=" + version
        + ", updates=" + updates() + ", epoch=" + membershipEpoch + ", pending=" + pending.size() + "]";
  }
}
