package io.shardtrain.actors.job;

import akka.Done;
import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;
import java.util.Map;

/**
 * The job's master protocol: what trainers and clients send the master, and what it answers. The
 * master sends trainers {@link TrainerNotice}s unasked.
 */
public final class JobProtocol {
  private JobProtocol() {}

  // ---- commands ----

  /** What the master accepts: the requests below, and its own messages ({@link Internal}). */
  public sealed interface Command extends CborSerializable
      permits SubmitJob, RegisterTrainer, RequestTask, ReportProgress, Heartbeat, LeaveJob, GetStatus, TakeCheckpoint,
      RollBackToCheckpoint, SettleFromRing, RingCheckpointed, RequestAucShare, ReportAuc, ToJob, DeleteJob, ListJobs,
      MaySubmit, CancelJob, Internal {}

  /**
   * The master's messages to itself (timers, answers to its own asks): declared beside the master,
   * which must accept them on the same reference; never sent by anyone else.
   */
  public non-sealed interface Internal extends Command {}

  /**
   * {@code command} for the master of job {@code jobId}. The cluster's master runs one master per
   * job; a command sent without this envelope reaches its newest running job (on a cluster that
   * runs one job at a time: the job), and a submit reaches the job it names.
   */
  public record ToJob(String jobId, @JsonTypeInfo(use = JsonTypeInfo.Id.CLASS) Command command) implements Command {
    public ToJob {
      if (jobId == null || jobId.isBlank()) throw new IllegalArgumentException("a command for a job needs its job id");
      if (command == null || command instanceof ToJob) {
        throw new IllegalArgumentException("job " + jobId + ": a command for a job must be one command, not " + command);
      }
    }
  }

  /**
   * Deletes finished job {@code jobId}'s journal: the events and snapshots of its master, its
   * blocks and its table's shards. A running job is refused; the id stays taken.
   */
  public record DeleteJob(String jobId, ActorRef<StatusReply<JobDeleted>> replyTo) implements Command {}

  /**
   * Ends the running job before its last step or epoch: its trainers finish the step they are in,
   * report it and leave, and no task is leased after it. Answers the job's status then; a job that
   * is done already is refused. The blocks keep the model, which can be saved and checkpointed.
   */
  public record CancelJob(ActorRef<StatusReply<JobStatus>> replyTo) implements Command {}

  /** Job {@code jobId}'s journal was deleted: {@code entities} persistent entities (master, blocks, shards). */
  public record JobDeleted(String jobId, int entities) implements CborSerializable {}

  /**
   * Whether a job {@code jobId} may be submitted: acknowledged for a new id or a running job,
   * refused (saying why) for a finished or deleted one. Asked before a job's blocks are placed.
   */
  public record MaySubmit(String jobId, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** The cluster's jobs, oldest first. */
  public record ListJobs(ActorRef<JobList> replyTo) implements Command {}

  /** The jobs the cluster knows, oldest first; a deleted job is no longer among them. */
  public record JobList(List<JobEntry> jobs) implements CborSerializable {}

  /** Job {@code jobId}: running (trainers may join it), or finished: done, or {@code cancelled} before that. */
  public record JobEntry(String jobId, boolean running, boolean cancelled) {
    /** A running job, or one that finished without a cancel. */
    public JobEntry(String jobId, boolean running) {
      this(jobId, running, false);
    }

    /** "running", "done" or "cancelled". */
    public String state() {
      return running ? "running" : cancelled ? "cancelled" : "done";
    }
  }

  /**
   * Starts a job, from {@code resumeFrom}'s reader offsets when not null (its blocks were resumed
   * from the same checkpoint); a second submit of the same job with the same spec is acknowledged,
   * one with another spec is refused, as is a job id that finished (until its journal is deleted).
   */
  public record SubmitJob(JobSpec job, ResumePoint resumeFrom, ActorRef<StatusReply<Done>> replyTo)
      implements Command {
    /** A job from its start. */
    public SubmitJob(JobSpec job, ActorRef<StatusReply<Done>> replyTo) {
      this(job, null, replyTo);
    }
  }

  /**
   * Where a resumed sync job's master starts: the checkpoint at {@code step} in {@code dir}, with
   * {@code epochsDone} epochs finished, {@code examples} examples trained and each data task's
   * reader offset then. The job's blocks start from the same checkpoint.
   */
  public record ResumePoint(long step, String dir, int epochsDone, long examples, List<TaskOffset> offsets) {
    public ResumePoint {
      if (step < 1) throw new IllegalArgumentException("a job resumes from a step >= 1, not " + step);
      offsets = List.copyOf(offsets);
    }
  }

  /** {@code offset} examples of task {@code task} of epoch {@code epoch} were trained by a checkpoint's step. */
  public record TaskOffset(int epoch, int task, long offset) {}

  /**
   * A trainer (new or restarted) joins; the reply says where it resumes. {@code trainer} receives
   * the master's notices; the master watches it, and its stop takes the trainer out of the job.
   */
  public record RegisterTrainer(String trainerId, ActorRef<TrainerNotice> trainer,
      ActorRef<StatusReply<Registration>> replyTo) implements Command {}

  /** Asks for the trainer's current task, or the next one. */
  public record RequestTask(String trainerId, ActorRef<StatusReply<TaskReply>> replyTo) implements Command {}

  /**
   * The reader offsets within a leased task after steps that every block acknowledged, oldest first,
   * in rollback generation {@code generation} (a report of an older one is refused). A trainer
   * reports the steps it completed since its last answered report in one message, each with its
   * offset, so the master can still tell a checkpoint's offsets at any step. Steps the master
   * recorded already (a report sent again after no answer came) are recorded once.
   */
  public record ReportProgress(String trainerId, int epoch, int task, List<StepOffset> steps, long generation,
      ActorRef<StatusReply<Done>> replyTo) implements Command {
    public ReportProgress {
      if (steps == null || steps.isEmpty()) throw new IllegalArgumentException("a progress report needs a step");
      steps = List.copyOf(steps);
    }

    /** The report of one step, whose batch ended at reader offset {@code offset}. */
    public ReportProgress(String trainerId, int epoch, int task, long offset, long step, long generation,
        ActorRef<StatusReply<Done>> replyTo) {
      this(trainerId, epoch, task, List.of(new StepOffset(step, offset)), generation, replyTo);
    }

    /** The last step reported, and the task's offset after it. */
    public StepOffset newest() {
      return steps.get(steps.size() - 1);
    }
  }

  /** The task was read up to reader offset {@code offset} after step {@code step}. */
  public record StepOffset(long step, long offset) {}

  /**
   * All-reduce: from the first member of a ring re-formed in membership epoch
   * {@code membershipEpoch}, whose members all applied step {@code step}: where each trainer that
   * ever had data in the ring stood after the newest step of that ring with its batch in it. The
   * master settles every task a departed or restarted trainer held there (at its reported offset
   * when it has no mark for that task).
   */
  public record SettleFromRing(String trainerId, long generation, long membershipEpoch, long step,
      List<RingMark> marks) implements Command {}

  /**
   * All-reduce: {@code trainerId}, the first member of its ring, wrote the replica as of step
   * {@code step} (rollback generation {@code generation}) to {@code dir}; {@code marks}: where every
   * trainer that had data in the ring stood by then. The master records the reader offsets of that
   * step as the job's checkpoint, to which it rolls back when every trainer has left.
   */
  public record RingCheckpointed(String trainerId, long generation, long step, String dir, List<RingMark> marks)
      implements Command {}

  /** Task {@code task} of epoch {@code epoch} was read by {@code trainerId} up to {@code offset} in step {@code step}. */
  public record RingMark(String trainerId, int epoch, int task, long offset, long step) {}

  /**
   * A trainer is alive: sent every third of {@code failure-timeout}, so one that waits at a barrier
   * for a dead peer is not taken for dead too.
   */
  public record Heartbeat(String trainerId) implements Command {}

  /** A trainer leaves on purpose (job done, or shutting down). */
  public record LeaveJob(String trainerId, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  public record GetStatus(ActorRef<JobStatus> replyTo) implements Command {}

  /**
   * A click-through trainer that finished the job asks which share of the test set to predict: the
   * master hands out shares {@code 0..of-1} (of = the job's planned trainers) until every share is
   * reported; a share leased and not reported for a while goes to whoever asks next.
   */
  public record RequestAucShare(String trainerId, ActorRef<StatusReply<AucShareLease>> replyTo) implements Command {}

  /** Predict test examples {@code [n * share / of, n * (share + 1) / of)}; {@code share} -1: none is left. */
  public record AucShareLease(int share, int of) implements CborSerializable {}

  /**
   * Share {@code share} of the job's test AUC, predicted on the values after step {@code step}: the
   * counts of its positive and negative examples per score bin (an {@code AucHistogram}), which the
   * master merges with the other shares.
   */
  public record ReportAuc(String trainerId, int share, long step, long[] positives, long[] negatives)
      implements Command {}

  /** Takes a checkpoint now and writes it to {@code dir} on the master's node ("": the configured directory). */
  public record TakeCheckpoint(String dir, ActorRef<StatusReply<CheckpointWritten>> replyTo) implements Command {}

  /**
   * Checkpoint durability: roll the job back to its last committed checkpoint. The master sends it
   * to itself when a {@code ps} node leaves the cluster; a trainer sends it with the generation it
   * knows when a block is behind its step (the block moved and recovered its newest checkpoint),
   * which is ignored while a rollback runs, or answered with the rollback notice when a newer
   * generation already exists (the trainer missed it); generation -1: always roll back.
   */
  public record RollBackToCheckpoint(String reason, long generation, String trainerId) implements Command {}

  // ---- replies ----

  /**
   * {@code lastStep}: the last step this trainer reported, where an async trainer continues;
   * {@code generation}: the job's rollback generation, which the trainer's pushes carry.
   */
  public record Registration(JobSpec job, long membershipEpoch, List<String> members, long lastStep, long generation)
      implements CborSerializable {}

  /** A checkpoint of job {@code jobId} at {@code step} was written to {@code dir} on the master's node and committed. */
  public record CheckpointWritten(String jobId, long step, String dir) implements CborSerializable {}

  public sealed interface TaskReply extends CborSerializable permits Lease, NotRegistered, NoTask, WaitForTrainers {}

  /**
   * Task {@code task} of epoch {@code epoch}: examples {@code [from, to)}, resume at {@code offset}.
   * {@code skip}: blocks that already hold the task's examples up to the given offset (a trainer
   * that left pushed them there before it could report them); the trainer pushes nothing to a block
   * for a batch that ends at or before its offset, and ends its batches at those offsets.
   */
  public record Lease(int epoch, int task, int from, int to, long offset, Map<String, Long> skip)
      implements TaskReply {
    public Lease {
      skip = skip == null ? Map.of() : Map.copyOf(skip);
    }

    /** A lease with no block ahead of the offset. */
    public Lease(int epoch, int task, int from, int to, long offset) {
      this(epoch, task, from, to, offset, Map.of());
    }
  }

  /**
   * The master does not know this trainer: it was dropped (no heartbeat within failure-timeout,
   * while it was paused or cut off), or the master lost it. The trainer registers again.
   */
  public record NotRegistered() implements TaskReply {}

  /** No task now: the job is done, or the remaining tasks are leased to others. */
  public record NoTask(boolean jobDone) implements TaskReply {}

  /**
   * The job has not started: it starts once its expected trainers are registered and every block
   * knows that membership, so the first sync step waits for all of them. Also the answer to a
   * trainer that joined a running job until every block knows it. Ask again shortly.
   */
  public record WaitForTrainers(int registered, int expected) implements TaskReply {}

  /**
   * The job's progress; {@code job} is null until one is submitted. {@code checkpointStep}: the
   * step of the last committed checkpoint (-1: none), written to {@code checkpointDir};
   * {@code generation}: how many times the job rolled back to a checkpoint. {@code testAuc}: a
   * click-through job's test AUC merged from every trainer's share over {@code testAucExamples}
   * examples, NaN until every planned trainer sent its share. {@code progress}: where each member
   * trainer is, in membership order. {@code cancelled}: the job was cancelled (so {@code done}
   * before its last step or epoch). {@code started}: its planned trainers registered (until then
   * it waits for them, and trains nothing). {@code settled}: the master waits for nothing from the blocks
   * (every task a departed trainer held is settled with them, every block knows the current
   * membership, and no checkpoint is being taken); a program that stops a finished job's nodes waits
   * for it, or the master's last messages reach blocks that are handing off and are dropped.
   */
  public record JobStatus(String jobId, boolean submitted, boolean started, boolean done, boolean cancelled, int epochsDone,
      long membershipEpoch, List<String> members, long examplesReported, List<String> leases, List<TrainerProgress> progress,
      JobSpec job,
      long checkpointStep, String checkpointDir, long generation, double testAuc, long testAucExamples,
      boolean settled) implements CborSerializable {

    /** No job submitted; {@code jobId} not blank: a job of that id was, and was deleted since. */
    public static JobStatus none(String jobId) {
      return new JobStatus(jobId, false, false, false, false, 0, 0, List.of(), 0, List.of(), List.of(), null, -1, "", 0,
          Double.NaN, 0, true);
    }

    /** This status with the merged test AUC of a click-through job over {@code examples} test examples. */
    public JobStatus withTestAuc(double auc, long examples) {
      return new JobStatus(jobId, submitted, started, done, cancelled, epochsDone, membershipEpoch, members,
          examplesReported, leases, progress, job, checkpointStep, checkpointDir, generation, auc, examples, settled);
    }

    /** This status, settled only if it was and {@code nothingAsked} (of the blocks, by the master's other parts). */
    public JobStatus settledOnlyIf(boolean nothingAsked) {
      return new JobStatus(jobId, submitted, started, done, cancelled, epochsDone, membershipEpoch, members,
          examplesReported, leases, progress, job, checkpointStep, checkpointDir, generation, testAuc, testAucExamples,
          settled && nothingAsked);
    }
  }

  /**
   * Member trainer {@code trainerId} (talked to through {@code ref}, whose address is its node) holds
   * task {@code task} of epoch {@code epoch}, {@code length} examples of which it read up to
   * {@code offset}; epoch and task are -1 while it holds none. {@code lastStep}: the last step it
   * reported (0: none).
   */
  public record TrainerProgress(String trainerId, ActorRef<TrainerNotice> ref, int epoch, int task, long offset,
      long length, long lastStep) implements CborSerializable {}
}
