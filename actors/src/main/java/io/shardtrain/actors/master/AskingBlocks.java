package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.cluster.sharding.typed.ShardingEnvelope;
import io.shardtrain.actors.job.JobProtocol.Command;
import io.shardtrain.actors.job.JobProtocol.Internal;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseShard;
import java.time.Duration;
import java.util.List;

/**
 * The master's {@link BlockRequests}: asks through the shard regions of the blocks (and of a
 * click-through job's table), each answer (or failure) coming back to the master as one of the
 * messages below.
 */
final class AskingBlocks implements BlockRequests {
  /** Block {@code blockId} knows membership epoch {@code epoch}; -1: the update failed. */
  record BlockAcked(String blockId, long epoch) implements Internal {}

  /** A block's answer (or failure) to how far it holds a settling task, in rollback generation {@code generation}. */
  record TaskMarkAnswered(int epoch, int task, String blockId, long generation,
      BlockProtocol.TaskProgress progress, Throwable failure) implements Internal {}

  /** A block's answer (or failure) to a rollback to generation {@code generation}. */
  record BlockRolledBack(String blockId, long generation, Throwable failure) implements Internal {}

  private final ActorContext<Command> context;
  private final ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks;
  private final Duration askTimeout;
  private ActorRef<ShardingEnvelope<SparseProtocol.Command>> tables;

  AskingBlocks(ActorContext<Command> context, ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks,
      Duration askTimeout) {
    this.context = context;
    this.blocks = blocks;
    this.askTimeout = askTimeout;
  }

  @Override
  public void updateMembership(String blockId, long epoch, List<String> members) {
    context.askWithStatus(Long.class, blocks, askTimeout,
        replyTo -> new ShardingEnvelope<>(blockId, new BlockProtocol.UpdateMembership(epoch, members, replyTo)),
        (ok, failure) -> new BlockAcked(blockId, failure == null ? epoch : -1L));
  }

  @Override
  public void updateTableMembership(String shardId, long epoch, List<String> members) {
    // Only click-through jobs have a table; the region is started when the first one needs it.
    if (tables == null) tables = SparseShard.init(context.getSystem());
    context.ask(SparseProtocol.MembershipReply.class, tables, askTimeout,
        replyTo -> new ShardingEnvelope<>(shardId, new SparseProtocol.UpdateMembership(epoch, members, replyTo)),
        (r, failure) -> new BlockAcked(shardId, r instanceof SparseProtocol.MembershipInForce m ? m.epoch() : -1L));
  }

  @Override
  public void getTaskMark(String blockId, int epoch, int task, long generation) {
    context.askWithStatus(BlockProtocol.TaskProgress.class, blocks, askTimeout,
        replyTo -> new ShardingEnvelope<>(blockId, new BlockProtocol.GetTaskMark(epoch, task, replyTo)),
        (p, failure) -> new TaskMarkAnswered(epoch, task, blockId, generation, p, failure));
  }

  @Override
  public void rollBack(String blockId, long step, long generation) {
    context.askWithStatus(Long.class, blocks, askTimeout,
        replyTo -> new ShardingEnvelope<>(blockId, new BlockProtocol.RollBack(step, generation, replyTo)),
        (ok, failure) -> new BlockRolledBack(blockId, generation, failure));
  }
}
