package io.shardtrain.actors.trainer;

import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.ActorContext;
import io.shardtrain.actors.allreduce.Replica;
import io.shardtrain.actors.job.JobProtocol;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An all-reduce member's part in the ring's checkpoints ({@link ReplicaCheckpoint}). Every
 * {@code checkpoint-every} steps the first member of the ring writes the replica as it stands after
 * that step (values, optimizer slots, counters, every member's task mark), off the trainer's
 * thread, and tells the master ({@link JobProtocol.RingCheckpointed}), which records its reader
 * offsets of that step. When every trainer has left, the master rolls back to its last checkpoint;
 * the members of the next ring hold no replica, and each restores the one written with it.
 */
final class RingCheckpointing {
  private final ActorContext<Trainer.Command> context;
  private final Trainer.Setup setup;
  private final Executor io;
  /** One write at a time: a slow disk skips a period rather than queueing replicas. */
  private final AtomicBoolean writing = new AtomicBoolean();
  /** The master's last committed checkpoint as its newest status said: step (-1: none) and directory. */
  private long masterStep = -1;
  private String masterDir = "";
  private boolean statusKnown;

  RingCheckpointing(ActorContext<Trainer.Command> context, Trainer.Setup setup) {
    this.context = context;
    this.setup = setup;
    this.io = context.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
  }

  /**
   * After step {@code step} of ring epoch {@code ringEpoch}: the member at {@code position} 0 writes
   * {@code replica} and {@code handover}'s marks when a checkpoint is due.
   */
  void applied(Session s, long step, int position, long ringEpoch, Replica replica, RingHandover handover) {
    long every = setup.settings().checkpointEvery();
    if (every <= 0 || step % every != 0 || position != 0 || !writing.compareAndSet(false, true)) return;
    // Copies: the replica moves on while the file is written.
    ReplicaCheckpoint c = new ReplicaCheckpoint(handover.end(ringEpoch, step, replica, false), replica.export());
    List<JobProtocol.RingMark> marks = handover.marks();
    Path dir = ReplicaCheckpoint.dir(setup.settings().checkpointDir(), s.job().jobId(), step).toAbsolutePath();
    long generation = s.generation();
    CompletableFuture.runAsync(() -> {
      try {
        c.write(dir);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, io).whenComplete((done, failure) -> {
      writing.set(false);
      if (failure != null) {
        context.getSystem().log().warn("trainer {}: replica checkpoint of step {} not written to {}: {}",
            setup.trainerId(), step, dir, failure.toString());
      } else {
        setup.master().tell(new JobProtocol.RingCheckpointed(setup.trainerId(), generation, step, dir.toString(),
            marks));
      }
    });
  }

  /** The master's status said its last checkpoint is of step {@code step} (-1: none), in {@code dir}. */
  void status(long step, String dir) {
    masterStep = step;
    masterDir = dir == null ? "" : dir;
    statusKnown = true;
  }

  /** Whether the master's status was heard: a ring without replicas must know whether to restore one. */
  boolean statusKnown() {
    return statusKnown;
  }

  /**
   * A ring none of whose members holds a replica: makes {@code replica} and {@code handover}'s marks
   * the master's last checkpoint; its step, or -1 when the master has none (the job's start).
   */
  long restore(Replica replica, RingHandover handover) {
    if (masterStep <= 0 || masterDir.isEmpty()) return -1;
    ReplicaCheckpoint c;
    try {
      c = ReplicaCheckpoint.read(Path.of(masterDir));
    } catch (IOException e) {
      // Training on without it would apply the examples since the checkpoint twice, or skip them.
      throw new IllegalStateException("trainer " + setup.trainerId() + ": the ring's checkpoint of step " + masterStep
          + " in " + masterDir + " cannot be read: " + e.getMessage(), e);
    }
    if (c.step() != masterStep) {
      throw new IllegalStateException("the checkpoint in " + masterDir + " is of step " + c.step() + ", not "
          + masterStep);
    }
    handover.restore(replica, c.parts(), c.end());
    context.getLog().info("trainer {}: restored the ring's replica of step {} ({} examples applied) from {}",
        setup.trainerId(), c.step(), c.end().examplesApplied(), masterDir);
    return c.step();
  }
}
