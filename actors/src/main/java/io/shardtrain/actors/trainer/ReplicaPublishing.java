package io.shardtrain.actors.trainer;

import akka.actor.typed.javadsl.ActorContext;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.compute.nn.Parameter;
import java.util.List;

/**
 * An all-reduce member's publications: its share of the parameter blocks (every block whose index
 * in the job's layout falls on its ring position), with the values its replica holds after a
 * step, so evaluation, save-model and a job whose trainers all left read the model from the blocks.
 */
final class ReplicaPublishing {

  /** A block kept (or refused) the values published after {@code step}. */
  record Published(String block, long step, Throwable failure) implements Trainer.Internal {}

  private final ActorContext<Trainer.Command> context;
  private final String trainerId;
  private final BlockExchange blocks;
  private int out;

  ReplicaPublishing(ActorContext<Trainer.Command> context, String trainerId, BlockExchange blocks) {
    this.context = context;
    this.trainerId = trainerId;
    this.blocks = blocks;
  }

  /**
   * Sends this member's share of the blocks by its position in {@code ring} (every block when
   * {@code all}), as the model holds them after {@code step} of the ring's epoch
   * ({@code examplesApplied} examples in all).
   */
  void publish(Session s, long step, RingLink ring, long examplesApplied, boolean all) {
    List<String> order = s.job().blocks();
    for (Parameter p : s.model().parameters()) {
      for (BlockSlice slice : s.model().slicesOf(p)) {
        String block = slice.entityId();
        if (!all && order.indexOf(block) % ring.size() != ring.position()) continue;
        float[] values = TrainerModel.valuesOf(p, slice);
        out++;
        context.pipeToSelf(blocks.publish(block, step, ring.epoch(), examplesApplied, values),
            (version, failure) -> new Published(block, step, failure));
      }
    }
  }

  /**
   * Before the member leaves after {@code lastStep}: publishes every block (a block keeps the first
   * of equal steps from one ring), so the model at rest is whole even when a member's publications
   * fail, its node going down; shows the replica to {@code listener} and logs its hash.
   */
  void publishLast(Session s, long lastStep, RingLink ring, long examplesApplied, StepListener listener) {
    publish(s, lastStep, ring, examplesApplied, true);
    listener.onReplica(trainerId, lastStep, s.model().valuesByName());
    // Members that left after the same step hold the same bits: the hash says so across processes.
    long hash = 17;
    for (Parameter p : s.model().parameters()) hash = 31 * hash + java.util.Arrays.hashCode(p.value().data());
    context.getLog().info("trainer {} leaves the ring after step {} with {} examples applied, replica hash {}",
        trainerId, lastStep, examplesApplied, Long.toHexString(hash));
  }

  void published(Published m) {
    out--;
    if (m.failure() != null) {
      context.getLog().warn("trainer {}: block {} did not keep the values of step {}: {}", trainerId, m.block(),
          m.step(), m.failure().getMessage());
    }
  }

  /** Whether every publication was answered. */
  boolean answered() {
    return out == 0;
  }
}
