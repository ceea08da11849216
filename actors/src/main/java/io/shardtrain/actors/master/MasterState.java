package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import com.fasterxml.jackson.annotation.JsonAutoDetect;
import io.shardtrain.actors.CborSerializable;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The master's state: the job, trainer membership and the data tasks of the open epochs (the
 * oldest unfinished epoch and the one after it). Mutated only by {@link Master}'s event handler,
 * so replaying the events rebuilds it exactly; serialized whole as the master's snapshot.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY,
    getterVisibility = JsonAutoDetect.Visibility.NONE, isGetterVisibility = JsonAutoDetect.Visibility.NONE)
public final class MasterState implements CborSerializable {

  /** One data task: the range {@code [from, to)} of one epoch, its reader offset and who holds it. */
  @JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY,
      getterVisibility = JsonAutoDetect.Visibility.NONE, isGetterVisibility = JsonAutoDetect.Visibility.NONE)
  static final class TaskState {
    int epoch;
    int index;
    int from;
    int to;
    long offset;
    String leasedTo;
    boolean finished;

    TaskState() {}

    TaskState(int epoch, int index, int from, int to) {
      this.epoch = epoch;
      this.index = index;
      this.from = from;
      this.to = to;
    }

    boolean untouched() {
      return leasedTo == null && offset == 0 && !finished;
    }
  }

  private JobSpec job;
  private long membershipEpoch;
  private LinkedHashMap<String, ActorRef<?>> members = new LinkedHashMap<>();
  private int firstOpenEpoch;
  private List<TaskState> tasks = new ArrayList<>();
  private long examplesReported;
  private HashMap<String, Long> lastStep = new HashMap<>();
  private boolean started;

  public JobSpec job() {
    return job;
  }

  public long membershipEpoch() {
    return membershipEpoch;
  }

  public Map<String, ActorRef<?>> members() {
    return members;
  }

  /** Whether tasks are handed out: the expected trainers were all there once. */
  public boolean started() {
    return started;
  }

  /**
   * Epoch-bounded: every task of the last epoch finished. Step-bounded, sync: a trainer reported the
   * last step (steps are the job's, so a trainer that died and came back late does not owe any).
   * Step-bounded, async: as many trainers as the job expects reached their last step.
   */
  public boolean done() {
    if (job == null) return false;
    if (job.boundedByEpochs()) return firstOpenEpoch >= job.epochs();
    if (job.mode() == BlockSpec.Mode.SYNC) return lastStep.values().stream().anyMatch(s -> s >= job.steps());
    return lastStep.values().stream().filter(s -> s >= job.steps()).count() >= job.trainers();
  }

  // ---- event application ----

  MasterState submitted(JobSpec j) {
    job = j;
    openEpoch(0);
    openEpoch(1);
    return this;
  }

  MasterState started(long epoch) {
    started = true;
    return this;
  }

  MasterState joined(String trainerId, ActorRef<?> ref) {
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
    // Its task goes back to the pool at the last reported offset: nothing skipped, nothing twice.
    for (TaskState t : tasks) {
      if (trainerId.equals(t.leasedTo)) t.leasedTo = null;
    }
    return this;
  }

  MasterState leased(int epoch, int index, String trainerId) {
    task(epoch, index).leasedTo = trainerId;
    return this;
  }

  MasterState progressed(int epoch, int index, long offset, String trainerId, long step) {
    lastStep.merge(trainerId, step, Math::max);
    TaskState t = task(epoch, index);
    examplesReported += offset - t.offset;
    t.offset = offset;
    if (offset == t.to - t.from) {
      t.finished = true;
      t.leasedTo = null;
      while (firstOpenEpoch < epochLimit() && allFinished(firstOpenEpoch)) {
        final int closed = firstOpenEpoch;
        tasks.removeIf(x -> x.epoch == closed);
        firstOpenEpoch++;
        openEpoch(firstOpenEpoch + 1);
      }
    }
    return this;
  }

  // ---- queries ----

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
      if (!t.finished && t.leasedTo == null) return t;
    }
    return null;
  }

  Master.Lease lease(TaskState t) {
    return new Master.Lease(t.epoch, t.index, t.from, t.to, t.offset);
  }

  Master.Registration registration(String trainerId) {
    return new Master.Registration(job, membershipEpoch, List.copyOf(members.keySet()),
        lastStep.getOrDefault(trainerId, 0L));
  }

  Master.JobStatus status() {
    List<String> leases = new ArrayList<>();
    for (TaskState t : tasks) {
      if (t.leasedTo != null) leases.add(t.epoch + "/" + t.index + "@" + t.offset + " -> " + t.leasedTo);
    }
    return new Master.JobStatus(job == null ? "" : job.jobId(), job != null, done(),
        firstOpenEpoch, membershipEpoch, List.copyOf(members.keySet()), examplesReported, leases, job);
  }

  private int epochLimit() {
    return job.boundedByEpochs() ? job.epochs() : Integer.MAX_VALUE;
  }

  private void openEpoch(int epoch) {
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
