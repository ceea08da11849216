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

  /** One data task: a range of one epoch, its reader offset and who holds it. */
  @JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY,
      getterVisibility = JsonAutoDetect.Visibility.NONE, isGetterVisibility = JsonAutoDetect.Visibility.NONE)
  static final class TaskState {
    int epoch;
    int index;
    long offset;
    String leasedTo;
    boolean finished;

    TaskState() {}

    TaskState(int epoch, int index) {
      this.epoch = epoch;
      this.index = index;
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
    if (offset == taskLength(index)) {
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
    return new Master.Lease(t.epoch, t.index, job.taskFrom(t.index), job.taskTo(t.index), t.offset);
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
    if (epoch >= epochLimit()) return;
    for (TaskState t : tasks) {
      if (t.epoch == epoch) return;
    }
    for (int i = 0; i < job.tasksPerEpoch(); i++) tasks.add(new TaskState(epoch, i));
  }

  private boolean allFinished(int epoch) {
    for (TaskState t : tasks) {
      if (t.epoch == epoch && !t.finished) return false;
    }
    return true;
  }

  private int taskLength(int index) {
    return job.taskTo(index) - job.taskFrom(index);
  }
}
