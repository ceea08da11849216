package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;

/**
 * Checkpoint durability's rollbacks. The blocks journal only their checkpoint captures, so when a
 * {@code ps} node leaves (or the master restarts) every block of a running sync job goes back to the
 * last committed checkpoint under a new generation; once all have, the master rolls its own
 * offsets back ({@link Master.RolledBackToCheckpoint}) and tells the trainers. A block whose answer
 * failed is asked again on the next tick; a second loss during a rollback starts it over under a
 * newer generation. Not journaled: a restarted master always rolls back.
 */
final class Rollbacks {
  private final BlockRequests blocks;
  private final Logger log;
  private final boolean checkpointDurability;
  /** Rollbacks started by this incarnation; a checkpoint taken across one is not committed. */
  private long started;
  /** The rollback in progress: its generation (0: none), target step and reason, and the blocks that did it. */
  private long generation;
  private long step;
  private String reason;
  private final Set<String> done = new HashSet<>();
  /** Blocks asked whose answer is still out: the tick asks again only after a failure. */
  private final Set<String> asked = new HashSet<>();

  Rollbacks(BlockRequests blocks, Logger log, boolean checkpointDurability) {
    this.blocks = blocks;
    this.log = log;
    this.checkpointDurability = checkpointDurability;
  }

  /** Whether losing a block's un-journaled steps rolls this job back: checkpoint durability and a running sync job. */
  boolean needed(MasterState s) {
    return checkpointDurability && s.job() != null && s.started() && !s.done()
        && s.job().mode() == BlockSpec.Mode.SYNC;
  }

  boolean running() {
    return generation != 0;
  }

  long started() {
    return started;
  }

  /** Starts a rollback of every block, or starts the running one over, when {@link #needed}. */
  void start(MasterState s, String why) {
    if (!needed(s)) return;
    started++;
    // Blocks that recovered from the journal during a running rollback must roll back again.
    generation = Math.max(s.generation(), generation) + 1;
    step = s.checkpoint() == null ? 0 : s.checkpoint().step();
    reason = why;
    done.clear();
    asked.clear();
    log.warn("{}: rolling job {} back to its checkpoint at step {} (generation {})", why, s.job().jobId(), step,
        generation);
    for (String block : s.job().blocks()) send(block);
  }

  /** Asks again every block of the running rollback that has neither done it nor an answer out. */
  void resend(MasterState s) {
    if (generation == 0 || s.job() == null) return;
    for (String block : s.job().blocks()) {
      if (!done.contains(block) && !asked.contains(block)) send(block);
    }
  }

  /**
   * Block {@code blockId} rolled back to generation {@code answeredGeneration} (or failed to): the
   * master's own rollback once every block did, which ends this one; else null.
   */
  Master.RolledBackToCheckpoint answered(MasterState s, String blockId, long answeredGeneration, Throwable failure) {
    if (answeredGeneration != generation) return null;
    asked.remove(blockId);
    if (failure != null) {
      // A block of the lost node answers once sharding restarted it.
      log.info("rollback of block {}: {}", blockId, failure.getMessage());
      return null;
    }
    done.add(blockId);
    if (done.size() < s.job().blocks().size()) return null;
    Master.RolledBackToCheckpoint rolledBack = new Master.RolledBackToCheckpoint(step, generation, reason);
    generation = 0;
    return rolledBack;
  }

  private void send(String blockId) {
    asked.add(blockId);
    blocks.rollBack(blockId, step, generation);
  }

  /** Tells trainer {@code trainerId} (if a member) to continue from the job's checkpoint in its generation. */
  static void tell(MasterState s, String trainerId) {
    ActorRef<TrainerNotice> trainer = s.members().get(trainerId);
    if (trainer == null) return;
    trainer.tell(new TrainerNotice.RollBack(s.checkpoint() == null ? 0 : s.checkpoint().step(), s.generation()));
  }
}
