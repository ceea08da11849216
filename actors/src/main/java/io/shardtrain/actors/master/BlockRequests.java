package io.shardtrain.actors.master;

import java.util.List;

/**
 * The master's requests to the job's parameter blocks. The master sends each as an ask whose
 * answer, or failure, comes back to it as a message of its own; the parts that decide what to ask
 * only call this, so they run without an actor system.
 */
interface BlockRequests {
  /** Tells block {@code blockId} the trainers of membership epoch {@code epoch}. */
  void updateMembership(String blockId, long epoch, List<String> members);

  /** Tells shard {@code shardId} of the job's sparse table the trainers of membership epoch {@code epoch}. */
  void updateTableMembership(String shardId, long epoch, List<String> members);

  /** Asks block {@code blockId} how far it holds task {@code task} of epoch {@code epoch}. */
  void getTaskMark(String blockId, int epoch, int task, long generation);

  /** Has block {@code blockId} go back to its checkpoint at {@code step} under rollback {@code generation}. */
  void rollBack(String blockId, long step, long generation);
}
