package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import akka.persistence.typed.SnapshotAdapter;
import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.shardtrain.actors.job.CborSerializable;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The master's state: the job, trainer membership and the data tasks of the open epochs (the
 * oldest unfinished epoch and the one after it). Mutated only by {@link Master}'s event handler,
 * so replaying the events rebuilds it exactly; serialized whole as the master's snapshot.
 *
 * <p>For checkpoints each task keeps the offsets it reported since the last committed checkpoint,
 * keyed by sync step, so the reader offsets at a checkpoint's step can be read off after later
 * steps were reported; tasks of a closed epoch stay until a checkpoint after their end commits,
 * so a rollback can reopen them.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY,
    getterVisibility = JsonAutoDetect.Visibility.NONE, isGetterVisibility = JsonAutoDetect.Visibility.NONE)
public final class MasterState implements CborSerializable {

  /** A task's reader offset at a checkpoint. */
  public record TaskOffset(int epoch, int task, long offset) {}

  /**
   * The last committed checkpoint: every block holds its state at {@code step}; {@code offsets},
   * {@code epochsDone}, {@code examples} and {@code trainerSteps} are the master's at that step.
   * {@code dir} is where its files are ("" when none were written).
   */
  public record CommittedCheckpoint(long step, String dir, List<TaskOffset> offsets, int epochsDone, long examples,
      Map<String, Long> trainerSteps) {
    public CommittedCheckpoint {
      offsets = List.copyOf(offsets);
      trainerSteps = Map.copyOf(trainerSteps);
    }
  }

  private JobSpec job;
  private long membershipEpoch;
  private LinkedHashMap<String, ActorRef<TrainerNotice>> members = new LinkedHashMap<>();
  private int firstOpenEpoch;
  private List<TaskState> tasks = new ArrayList<>();
  private long examplesReported;
  private HashMap<String, Long> lastStep = new HashMap<>();
  private boolean started;
  private CommittedCheckpoint checkpoint;
  private long generation;
  /** Left out of a snapshot while false: the snapshots of every job not cancelled read as before. */
  @JsonInclude(JsonInclude.Include.NON_DEFAULT)
  private boolean cancelled;

  public JobSpec job() {
    return job;
  }

  public long membershipEpoch() {
    return membershipEpoch;
  }

  public Map<String, ActorRef<TrainerNotice>> members() {
    return members;
  }

  /** Whether tasks are handed out: the expected trainers were all there once. */
  public boolean started() {
    return started;
  }

  /** The last committed checkpoint, or null before the first. */
  public CommittedCheckpoint checkpoint() {
    return checkpoint;
  }

  /** Whether the job was cancelled (and so is done, short of its last step or epoch). */
  public boolean cancelled() {
    return cancelled;
  }

  /** How many rollbacks the job went through; pushes and progress of an older generation are refused. */
  public long generation() {
    return generation;
  }

  /**
   * Epoch-bounded: every task of the last epoch finished. Step-bounded, sync or all-reduce: a trainer reported the
   * last step (steps are the job's, so a trainer that died and came back late does not owe any).
   * Step-bounded, async: as many trainers as the job expects reached their last step. Cancelled: at once.
   */
  public boolean done() {
    if (job == null) return false;
    if (cancelled) return true;
    if (job.boundedByEpochs()) return firstOpenEpoch >= job.epochs();
    if (job.mode().lockstep()) return lastStep.values().stream().anyMatch(s -> s >= job.steps());
    return lastStep.values().stream().filter(s -> s >= job.steps()).count() >= job.trainers();
  }

  /**
   * Snapshots are copies: the store may serialize, or keep, the object it is handed after the master
   * applied later events to its state, and a store that kept it would see recovery replay events into it.
   */
  static final SnapshotAdapter<MasterState> SNAPSHOT_ADAPTER = new SnapshotAdapter<>() {
    @Override
    public Object toJournal(MasterState state) {
      return state.copy();
    }

    @Override
    public MasterState fromJournal(Object from) {
      return ((MasterState) from).copy();
    }
  };

  /** A copy that shares nothing mutable with this state. */
  MasterState copy() {
    MasterState c = new MasterState();
    c.job = job;
    c.membershipEpoch = membershipEpoch;
    c.members = new LinkedHashMap<>(members);
    c.firstOpenEpoch = firstOpenEpoch;
    for (TaskState t : tasks) c.tasks.add(t.copy());
    c.examplesReported = examplesReported;
    c.lastStep = new HashMap<>(lastStep);
    c.started = started;
    c.checkpoint = checkpoint;
    c.generation = generation;
    c.cancelled = cancelled;
    return c;
  }

  // ---- event application ----

  MasterState submitted(JobSpec j, JobProtocol.ResumePoint from) {
    job = j;
    openEpoch(0);
    openEpoch(1);
    return from == null ? this : ResumedCheckpoint.resume(this, from);
  }

  MasterState cancel() {
    cancelled = true;
    return this;
  }

  MasterState started(long epoch) {
    started = true;
    return this;
  }

  MasterState joined(String trainerId, ActorRef<TrainerNotice> ref) {
    // A new incarnation of a member (its node restarted before the old one was noticed gone).
    if (members.containsKey(trainerId)) release(trainerId);
    members.put(trainerId, ref);
    membershipEpoch++;
    // A trainer that joins mid-job takes a share of the next epoch at the latest: an open epoch
    // that nobody has started yet is cut again into one task per trainer now in the job.
    for (int e = firstOpenEpoch; e <= firstOpenEpoch + 1; e++) {
      int open = tasksOf(e); // 0: past the job's last epoch
      if (open > 0 && open < tasksFor() && allUntouched(e)) cut(e);
    }
    return this;
  }

  MasterState left(String trainerId) {
    members.remove(trainerId);
    membershipEpoch++;
    release(trainerId);
    return this;
  }

  /**
   * The trainer's task waits until every block said how far it got: some may have its steps after
   * the last one it reported, so neither the reported offset nor the blocks' alone is right.
   */
  private void release(String trainerId) {
    for (TaskState t : tasks) {
      if (!trainerId.equals(t.leasedTo)) continue;
      t.leasedTo = null;
      if (!t.finished) t.settlingFor = trainerId;
    }
  }

  /**
   * Every block answered for the settling task: they all hold its examples up to {@code offset}
   * (which counts as progress of {@code trainerId} at {@code step}), and those in {@code skip} up
   * to more; the task is free again.
   */
  MasterState settled(int epoch, int index, String trainerId, long offset, long step, Map<String, Long> skip) {
    TaskState t = task(epoch, index);
    if (t == null) return this;
    t.settlingFor = null;
    t.skip = new TreeMap<>(skip);
    if (offset > t.offset) progressed(epoch, index, offset, trainerId, step);
    return this;
  }

  /** The tasks waiting to be settled. */
  List<TaskState> settling() {
    List<TaskState> out = new ArrayList<>();
    for (TaskState t : tasks) {
      if (t.settlingFor != null) out.add(t);
    }
    return out;
  }

  MasterState leased(int epoch, int index, String trainerId) {
    task(epoch, index).leasedTo = trainerId;
    return this;
  }

  /**
   * {@code trainerId} read the task up to each step's offset, oldest first; every step but the last
   * counts only where it is ahead of the task's offset (the master has the others already).
   */
  MasterState progressed(int epoch, int index, String trainerId, List<JobProtocol.StepOffset> steps) {
    for (int i = 0; i < steps.size(); i++) {
      TaskState t = task(epoch, index);
      JobProtocol.StepOffset x = steps.get(i);
      if (t != null && (i == steps.size() - 1 || x.offset() > t.offset)) {
        progressed(epoch, index, x.offset(), trainerId, x.step());
      }
    }
    return this;
  }

  MasterState progressed(int epoch, int index, long offset, String trainerId, long step) {
    lastStep.merge(trainerId, step, Math::max);
    TaskState t = task(epoch, index);
    examplesReported += offset - t.offset;
    t.offset = offset;
    t.record(step, offset);
    t.skip.values().removeIf(v -> v <= offset);
    if (offset == t.length()) {
      t.finished = true;
      t.finishedAtStep = step;
      t.leasedTo = null;
      while (firstOpenEpoch < epochLimit() && allFinished(firstOpenEpoch)) {
        firstOpenEpoch++;
        openEpoch(firstOpenEpoch + 1);
      }
      dropClosedTasks();
    }
    return this;
  }

  MasterState checkpointCommitted(CommittedCheckpoint c) {
    checkpoint = c;
    for (TaskState t : tasks) t.compact(c.step());
    dropClosedTasks();
    return this;
  }

  /**
   * Back to the committed checkpoint (step 0, the job's start, before the first): reader offsets,
   * finished tasks and epochs, examples and trainer steps as they were then; no task is leased, so
   * the trainers lease again and read from those offsets. Pushes and progress of older
   * generations are refused from now on.
   */
  MasterState rolledBack(long step, long newGeneration) {
    generation = newGeneration;
    CommittedCheckpoint c = checkpoint != null && checkpoint.step() == step ? checkpoint
        : new CommittedCheckpoint(0, "", List.of(), 0, 0, Map.of());
    List<TaskState> kept = new ArrayList<>();
    for (TaskState t : tasks) {
      Long at = null;
      for (TaskOffset o : c.offsets()) {
        if (o.epoch() == t.epoch && o.task() == t.index) at = o.offset();
      }
      if (at == null && (t.epoch < c.epochsDone() || c.step() > 0)) continue;
      t.offset = at == null ? 0 : at;
      t.finished = t.offset == t.length();
      t.leasedTo = null;
      // The blocks went back to the checkpoint too: nothing of theirs to settle or skip.
      t.settlingFor = null;
      t.skip.clear();
      t.history.clear();
      t.floorOffset = t.offset;
      t.floorStep = c.step();
      kept.add(t);
    }
    tasks = kept;
    firstOpenEpoch = c.epochsDone();
    openEpoch(firstOpenEpoch);
    openEpoch(firstOpenEpoch + 1);
    examplesReported = c.examples();
    for (Map.Entry<String, Long> e : lastStep.entrySet()) e.setValue(Math.min(e.getValue(), c.step()));
    return this;
  }

  /** Tasks of closed epochs leave once a committed checkpoint is past their end (a rollback never reopens them). */
  private void dropClosedTasks() {
    long committed = checkpoint == null ? 0 : checkpoint.step();
    tasks.removeIf(x -> x.epoch < firstOpenEpoch && x.finished && x.finishedAtStep <= committed);
  }

  // ---- queries ----

  /** Whether every trainer of the membership has reported step {@code step} or later. */
  boolean allReportedUpTo(long step) {
    for (String m : members.keySet()) {
      if (lastStep.getOrDefault(m, 0L) < step) return false;
    }
    return true;
  }

  /** What a checkpoint at {@code step} records of the master: each task's offset then, and the totals. */
  CommittedCheckpoint checkpointAt(long step, String dir) {
    List<TaskOffset> offsets = new ArrayList<>();
    long examples = examplesReported;
    int epochsDone = Integer.MAX_VALUE;
    for (TaskState t : tasks) {
      long at = t.offsetAt(step);
      offsets.add(new TaskOffset(t.epoch, t.index, at));
      examples -= t.offset - at;
      if (at < t.length()) epochsDone = Math.min(epochsDone, t.epoch);
    }
    if (epochsDone == Integer.MAX_VALUE) epochsDone = firstOpenEpoch;
    Map<String, Long> steps = new HashMap<>();
    lastStep.forEach((k, v) -> steps.put(k, Math.min(v, step)));
    return new CommittedCheckpoint(step, dir, offsets, Math.min(epochsDone, firstOpenEpoch), examples, steps);
  }

  TaskState task(int epoch, int index) {
    for (TaskState t : tasks) {
      if (t.epoch == epoch && t.index == index) return t;
    }
    return null;
  }

  TaskState leaseOf(String trainerId) {
    for (TaskState t : tasks) {
      if (!t.finished && trainerId.equals(t.leasedTo)) return t;
    }
    return null;
  }

  TaskState nextFreeTask() {
    for (TaskState t : tasks) {
      if (!t.finished && t.leasedTo == null && t.settlingFor == null) return t;
    }
    return null;
  }

  JobProtocol.Lease lease(TaskState t) {
    return new JobProtocol.Lease(t.epoch, t.index, t.from, t.to, t.offset, t.skip);
  }

  JobProtocol.Registration registration(String trainerId) {
    return new JobProtocol.Registration(job, membershipEpoch, List.copyOf(members.keySet()),
        lastStep.getOrDefault(trainerId, 0L), generation);
  }

  JobProtocol.JobStatus status() {
    List<String> leases = new ArrayList<>();
    for (TaskState t : tasks) {
      if (t.leasedTo != null) leases.add(t.epoch + "/" + t.index + "@" + t.offset + " -> " + t.leasedTo);
    }
    List<JobProtocol.TrainerProgress> progress = new ArrayList<>();
    members.forEach((id, ref) -> {
      TaskState t = leaseOf(id);
      long step = lastStep.getOrDefault(id, 0L);
      progress.add(t == null ? new JobProtocol.TrainerProgress(id, ref, -1, -1, 0, 0, step)
          : new JobProtocol.TrainerProgress(id, ref, t.epoch, t.index, t.offset, t.length(), step));
    });
    return new JobProtocol.JobStatus(job == null ? "" : job.jobId(), job != null, started(), done(), cancelled,
        firstOpenEpoch, membershipEpoch, List.copyOf(members.keySet()), examplesReported, leases, progress, job,
        checkpoint == null ? -1 : checkpoint.step(), checkpoint == null ? "" : checkpoint.dir(), generation,
        Double.NaN, 0, settling().isEmpty());
  }

  private int epochLimit() {
    return job.boundedByEpochs() ? job.epochs() : Integer.MAX_VALUE;
  }

  void openEpoch(int epoch) {
    if (epoch >= epochLimit() || tasksOf(epoch) > 0) return;
    cut(epoch);
  }

  /**
   * Cuts {@code epoch} into one task per trainer: as many as the job asked for, more when more
   * have joined (with exactly the job's trainers the cut is the one a single process replays).
   */
  private void cut(int epoch) {
    tasks.removeIf(t -> t.epoch == epoch);
    int n = tasksFor();
    int examples = job.trainExamples();
    int size = (examples + n - 1) / n;
    for (int i = 0; i * size < examples; i++) {
      tasks.add(new TaskState(epoch, i, i * size, Math.min(examples, (i + 1) * size)));
    }
  }

  private int tasksFor() {
    return Math.max(job.trainers(), members.size());
  }

  private int tasksOf(int epoch) {
    int n = 0;
    for (TaskState t : tasks) {
      if (t.epoch == epoch) n++;
    }
    return n;
  }

  private boolean allUntouched(int epoch) {
    for (TaskState t : tasks) {
      if (t.epoch == epoch && !t.untouched()) return false;
    }
    return true;
  }

  private boolean allFinished(int epoch) {
    for (TaskState t : tasks) {
      if (t.epoch == epoch && !t.finished) return false;
    }
    return true;
  }
}
