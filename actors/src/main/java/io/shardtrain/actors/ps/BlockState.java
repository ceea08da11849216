package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.Contributor;
import io.shardtrain.actors.ps.BlockEvents.Event;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.ReplicaPublished;
import io.shardtrain.actors.ps.BlockEvents.Resumed;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockProtocol.Checkpoint;
import io.shardtrain.actors.ps.BlockProtocol.Initialize;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.ps.BlockProtocol.TaskProgress;
import io.shardtrain.compute.optim.BlockUpdate;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.compute.optim.WeightedGradient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The block's state, owned by the entity: values, optimizer state and version, the sync barrier,
 * per-trainer last steps, task marks and held checkpoints. It changes only through its event
 * handlers ({@link #apply}), which call into the block's {@link BlockUpdate} for the math, and,
 * for what a durability does not journal, through {@link #holdCapture} and {@link #apply} called
 * by {@link BlockDurability}. {@code values} is copy-on-write: an update writes a new array, so the
 * array of a version never changes once published and pulls and snapshots of that version share it
 * (one copy per update, not one per pull). The optimizer slots change in place, so snapshots copy
 * them (the snapshot store serializes asynchronously).
 */
public final class BlockState {

  /**
   * A sync contribution to the pending step; weight 0 and no values when it was skipped. {@code mark}
   * (nullable) names the examples behind it, for the {@link StepCommitted} that applies it.
   */
  public record Contribution(String trainerId, float weight, float[] values, TaskMark mark)
      implements WeightedGradient {
    public Contribution(String trainerId, float weight, float[] values) {
      this(trainerId, weight, values, null);
    }
  }

  /** A held checkpoint: values, optimizer slots, update count and examples applied at one version. Arrays are never mutated. */
  public record Held(float[] values, float[][] slots, long updates, long examples) {
    public Held(float[] values, float[][] slots, long updates) {
      this(values, slots, updates, 0);
    }
  }

  BlockSpec spec;
  float[] values;
  OptimizerState optimizerState;
  long version;
  TreeMap<String, Long> lastSteps = new TreeMap<>();
  /** Per data task ({@link #taskKey}), how far its examples reached this block. */
  TreeMap<Long, TaskProgress> taskMarks = new TreeMap<>();
  long examplesApplied;
  TreeMap<Long, Held> checkpoints = new TreeMap<>();
  long generation;
  /** All-reduce: the ring epoch of the publication that is {@link #version}; -1 when none is known. */
  long publishedEpoch = -1;
  private SyncBarrier barrier = new SyncBarrier();
  /** Built from {@link #spec}; holds no state of its own, so copies share it. */
  private BlockUpdate update;

  BlockState() {}

  static BlockState restore(BlockSpec spec, float[] values, float[][] slots, long updates, long version,
      long membershipEpoch, List<String> members, List<Contribution> pending, Map<String, Long> lastSteps,
      long examplesApplied) {
    BlockState s = new BlockState();
    if (spec != null) {
      if (values.length != spec.length()) {
        throw new IllegalArgumentException("state of block " + spec.entityId() + " has " + values.length
            + " values, its spec says " + spec.length());
      }
      s.use(spec);
      s.values = values;
      s.optimizerState = OptimizerState.of(spec.length(), slots, updates);
    }
    s.version = version;
    s.barrier = new SyncBarrier(membershipEpoch, members, pending);
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

  /** {@link #restore} plus the ring epoch of the publication that is its version. */
  static BlockState restorePublishedEpoch(BlockState s, long publishedEpoch) {
    s.publishedEpoch = publishedEpoch;
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

  /** The one place a block's update rule is made: from its spec's optimizer and schedule. */
  static BlockUpdate updateRule(BlockSpec spec) {
    return new BlockUpdate(spec.optimizer().create(), spec.schedule());
  }

  private void use(BlockSpec spec) {
    this.spec = spec;
    this.update = updateRule(spec);
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
    return barrier.epoch();
  }

  public List<String> members() {
    return List.copyOf(barrier.members());
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
    return List.copyOf(barrier.pending());
  }

  /**
   * The pending step's contributions as the events that record them (a new list), for a block
   * that journals them before they are applied: it hands off, or a membership change needs them.
   */
  public List<Event> pendingEvents() {
    List<Event> events = new ArrayList<>();
    long step = version + 1;
    for (Contribution c : barrier.pending()) {
      events.add(c.weight() > 0f ? new GradientReceived(c.trainerId(), step, c.weight(), c.values(), c.mark())
          : new GradientSkipped(c.trainerId(), step, c.mark()));
    }
    return events;
  }

  /** The examples behind the applied updates (sync: the sum of the steps' contributions' weights). */
  public long examplesApplied() {
    return examplesApplied;
  }

  /**
   * Where the learning-rate schedule stands: the examples applied, counted in the updates the spec
   * planned ({@link BlockSpec#examplesPerUpdate}), or the update count when it planned none.
   */
  long schedulePosition() {
    return LearningRateSchedule.position(examplesApplied, spec.examplesPerUpdate(), optimizerState.updates());
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

  /** The sync barrier of the pending step, to read; it changes through the event handlers only. */
  SyncBarrier barrier() {
    return barrier;
  }

  boolean isSync() {
    return spec != null && spec.mode() == BlockSpec.Mode.SYNC;
  }

  /** Sync, and the pending step has contributions. */
  boolean isWaiting() {
    return isSync() && barrier.isWaiting();
  }

  /** A deep copy; the values and contribution arrays are never mutated, so they are shared. */
  public BlockState copy() {
    BlockState c = new BlockState();
    c.spec = spec;
    c.update = update;
    c.values = values;
    c.optimizerState = optimizerState == null ? null : optimizerState.copy();
    c.version = version;
    c.barrier = barrier.copy();
    c.lastSteps = new TreeMap<>(lastSteps);
    c.taskMarks = taskMarks();
    c.examplesApplied = examplesApplied;
    c.checkpoints = new TreeMap<>(checkpoints);
    c.generation = generation;
    c.publishedEpoch = publishedEpoch;
    return c;
  }

  /** A copy without the held checkpoints. */
  BlockState copyWithoutCheckpoints() {
    BlockState c = copy();
    c.checkpoints.clear();
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

  /** The live values (shared: copy-on-write), a copy of the slots, and the update count. */
  Held capture() {
    return new Held(values, optimizerState.copy().slots(), optimizerState.updates(), examplesApplied);
  }

  /**
   * Holds a capture of the live state at its version, dropping held checkpoints older than
   * {@code keepFrom}: exact durability's checkpoints, which live in memory only.
   */
  void holdCapture(long keepFrom) {
    hold(version, keepFrom, capture());
  }

  private void hold(long step, long keepFrom, Held h) {
    checkpoints.headMap(keepFrom).clear();
    checkpoints.put(step, h);
  }

  /** Values, slots, updates and version from {@code h}; {@code dropPending}: also forget the contributions held. */
  private void restoreCheckpoint(long step, Held h, boolean dropPending) {
    values = h.values(); // copy-on-write: never changed in place
    float[][] slots = new float[h.slots().length][];
    for (int i = 0; i < slots.length; i++) slots[i] = h.slots()[i].clone();
    optimizerState = OptimizerState.of(spec.length(), slots, h.updates());
    examplesApplied = h.examples();
    version = step;
    if (dropPending) {
      barrier.clearPending();
      lastSteps = new TreeMap<>();
      // The master's reader offsets go back to the checkpoint's too.
      taskMarks = new TreeMap<>();
    }
  }

  // Event handlers: deterministic, so replay rebuilds the same floats.

  /** The event handler: applies {@code e} to this state and returns it. */
  BlockState apply(Event e) {
    if (e instanceof Initialized i) return onInitialized(i);
    if (e instanceof Resumed r) return onResumed(r);
    if (e instanceof GradientReceived g) return onGradientReceived(g);
    if (e instanceof GradientSkipped g) return onGradientSkipped(g);
    if (e instanceof StepApplied a) return onStepApplied(a);
    if (e instanceof StepCommitted c) return onStepCommitted(c);
    if (e instanceof GradientApplied a) return onGradientApplied(a);
    if (e instanceof MembershipUpdated m) return onMembershipUpdated(m);
    if (e instanceof CheckpointTaken t) return onCheckpointTaken(t);
    if (e instanceof RolledBackTo r) return onRolledBackTo(r);
    if (e instanceof ReplicaPublished p) return onReplicaPublished(p);
    throw new IllegalArgumentException("unknown event " + e);
  }

  private BlockState onInitialized(Initialized e) {
    use(e.spec());
    // Copy-on-write: the event's array is never changed, so the state may share it.
    values = e.values();
    optimizerState = update.newState(spec.length());
    version = 0;
    publishedEpoch = -1;
    examplesApplied = 0;
    barrier.clearPending();
    lastSteps.clear();
    taskMarks.clear();
    checkpoints.clear();
    // The initial values are checkpoint 0: a job that fails before its first checkpoint rolls back to them.
    if (spec.mode() == BlockSpec.Mode.SYNC) checkpoints.put(0L, capture());
    return this;
  }

  /** As initialised, then at the checkpoint's state, which it holds: a rollback of the resumed job returns there. */
  private BlockState onResumed(Resumed e) {
    onInitialized(new Initialized(e.spec(), e.values()));
    checkpoints.clear();
    Held h = new Held(e.values(), e.slots(), e.updates(), e.examples());
    hold(e.step(), 0, h);
    restoreCheckpoint(e.step(), h, true);
    return this;
  }

  // A trainer contributes once per step; a block that journals the contributions it holds (as it
  // moves, or at a membership change) may hold some of them in its snapshot already.
  private BlockState onGradientReceived(GradientReceived e) {
    if (barrier.hasContributed(e.trainerId())) return this;
    barrier.add(new Contribution(e.trainerId(), e.weight(), e.values(), e.mark()));
    accepted(e.trainerId(), e.step(), e.mark());
    return this;
  }

  private BlockState onGradientSkipped(GradientSkipped e) {
    if (barrier.hasContributed(e.trainerId())) return this;
    barrier.add(new Contribution(e.trainerId(), 0f, new float[0], e.mark()));
    // Dropped by policy, but done with: the trainer moves past these examples.
    accepted(e.trainerId(), e.step(), e.mark());
    return this;
  }

  private BlockState onStepApplied(StepApplied e) {
    // Summed in trainer order, live and in replay alike.
    values = update.applyMean(values, optimizerState, barrier.byTrainer(), schedulePosition());
    examplesApplied += barrier.examples();
    version = e.step();
    barrier.clearPending();
    return this;
  }

  private BlockState onStepCommitted(StepCommitted e) {
    // The mean was summed once, live; replay applies those same floats.
    if (e.mean() != null) values = update.apply(values, optimizerState, e.mean(), schedulePosition());
    examplesApplied += e.examples();
    // Replay: the contributions were not journaled, so this is where they count.
    for (Contributor c : e.contributors()) accepted(c.trainerId(), e.step(), c.mark());
    version = e.step();
    barrier.clearPending();
    return this;
  }

  /**
   * The {@link StepCommitted} that applies the pending step as {@code step}: the weighted mean of its
   * contributions in trainer order, their examples and who they came from. Changes nothing.
   */
  StepCommitted commit(long step) {
    List<Contribution> pending = barrier.byTrainer();
    List<Contributor> contributors = new ArrayList<>(pending.size());
    for (Contribution c : pending) contributors.add(new Contributor(c.trainerId(), c.mark()));
    return new StepCommitted(step, BlockUpdate.weightedMean(spec.length(), pending), barrier.examples(), contributors);
  }

  private BlockState onGradientApplied(GradientApplied e) {
    values = update.apply(values, optimizerState, e.values(), schedulePosition());
    examplesApplied += Math.round(e.weight());
    version++;
    accepted(e.trainerId(), e.step(), e.mark());
    return this;
  }

  private BlockState onMembershipUpdated(MembershipUpdated e) {
    barrier.setMembership(e.epoch(), e.trainers());
    return this;
  }

  private BlockState onCheckpointTaken(CheckpointTaken e) {
    Held h = new Held(e.values(), e.slots(), e.updates(), e.examples());
    hold(e.step(), e.keepFrom(), h);
    // Live: the same values (captured from them), and contributions to the next step stay. Replay:
    // the journal holds no gradients, so this is where the block resumes.
    restoreCheckpoint(e.step(), h, false);
    return this;
  }

  private BlockState onRolledBackTo(RolledBackTo e) {
    Held h = checkpoints.get(e.step());
    if (h == null) throw new IllegalStateException("rollback to step " + e.step() + " without its checkpoint");
    checkpoints.tailMap(e.step(), false).clear();
    restoreCheckpoint(e.step(), h, true);
    generation = e.generation();
    return this;
  }

  /**
   * Whether {@code p} becomes this block's version: a newer step, or the same step from a newer
   * ring (one re-formed after a member died redoes the step without that member's batch). Where
   * the version's ring epoch is unknown (a journal written before epochs were), the first stays.
   */
  boolean takes(Publish p) {
    return p.step() > version || (p.step() == version && publishedEpoch >= 0 && p.ringEpoch() > publishedEpoch);
  }

  private BlockState onReplicaPublished(ReplicaPublished e) {
    // Copy-on-write, as everywhere: the event's array is never changed.
    values = e.values();
    version = e.step();
    publishedEpoch = e.ringEpoch();
    examplesApplied = e.examples();
    return this;
  }

  /** A trainer's push for {@code step} was taken: its last step, and how far its task's examples got. */
  private void accepted(String trainerId, long step, TaskMark m) {
    lastSteps.put(trainerId, step);
    mark(m, step);
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

  @Override
  public String toString() {
    return "BlockState[" + (spec == null ? "uninitialised" : spec.entityId()) + ", version=" + version
        + ", updates=" + updates() + ", epoch=" + membershipEpoch() + ", pending=" + barrier.pending().size() + "]";
  }
}
