package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.TrainerNotice;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps every parameter block (and every shard of a click-through job's sparse table) told the
 * trainer membership, whose numbered epochs tell sync
 * barriers whom to wait for: each change goes to every block and is re-sent until the block
 * acknowledges that epoch or a later one. A trainer that joins a running job gets its first task
 * only once every block knows its epoch, so no block closes that trainer's first step without it.
 * Not journaled: a recovered master sends the membership to every block again.
 */
final class MembershipBroadcast {
  private final BlockRequests blocks;
  /** The newest membership epoch each block acknowledged. */
  private final Map<String, Long> acked = new HashMap<>();
  /** Trainers that joined a running job, with their membership epoch. */
  private final Map<String, Long> joining = new HashMap<>();

  MembershipBroadcast(BlockRequests blocks) {
    this.blocks = blocks;
  }

  /** The entities whose sync barriers wait for the membership: the job's blocks and table shards. */
  static List<String> barrier(JobSpec job) {
    if (job.ctr() == null) return job.blocks();
    List<String> all = new ArrayList<>(job.blocks());
    all.addAll(job.tableShards());
    return all;
  }

  /**
   * Sends the current membership to every block of the job; in all-reduce mode to every trainer
   * too, whose ring re-forms on it.
   */
  void broadcast(MasterState s) {
    if (s.job() == null) return;
    for (String block : s.job().blocks()) send(s, block);
    for (String shard : s.job().tableShards()) sendTable(s, shard);
    if (s.job().mode() == BlockSpec.Mode.ALLREDUCE) {
      TrainerNotice.MembersChanged m = new TrainerNotice.MembersChanged(s.membershipEpoch(),
          List.copyOf(s.members().keySet()));
      for (ActorRef<TrainerNotice> trainer : s.members().values()) trainer.tell(m);
    }
  }

  /** Sends the current membership again to every block that has not acknowledged it. */
  void resend(MasterState s) {
    if (s.job() == null) return;
    for (String block : s.job().blocks()) {
      if (acked.getOrDefault(block, -1L) < s.membershipEpoch()) send(s, block);
    }
    for (String shard : s.job().tableShards()) {
      if (acked.getOrDefault(shard, -1L) < s.membershipEpoch()) sendTable(s, shard);
    }
  }

  /** Block {@code blockId} knows membership epoch {@code epoch}; -1: an update to it failed. */
  void acked(String blockId, long epoch) {
    acked.merge(blockId, epoch, Math::max);
  }

  /** Whether every block (and table shard) of the job knows its current membership; true without a job. */
  boolean allKnow(MasterState s) {
    return s.job() == null || allKnow(barrier(s.job()), s.membershipEpoch());
  }

  /** Whether every one of {@code blocks} knows membership epoch {@code epoch}. */
  boolean allKnow(List<String> blocks, long epoch) {
    for (String block : blocks) {
      if (acked.getOrDefault(block, -1L) < epoch) return false;
    }
    return true;
  }

  /** {@code trainerId} joined the running job in membership epoch {@code epoch}. */
  void joinedRunning(String trainerId, long epoch) {
    joining.put(trainerId, epoch);
  }

  void left(String trainerId) {
    joining.remove(trainerId);
  }

  /**
   * Whether {@code trainerId} may lease a task: not while it joined the running job in an epoch that
   * some of {@code blocks} does not know yet. Once it may, it no longer counts as joining.
   */
  boolean mayLease(String trainerId, List<String> blocks) {
    Long joinedAt = joining.get(trainerId);
    if (joinedAt == null) return true;
    if (!allKnow(blocks, joinedAt)) return false;
    joining.remove(trainerId);
    return true;
  }

  private void send(MasterState s, String blockId) {
    blocks.updateMembership(blockId, s.membershipEpoch(), List.copyOf(s.members().keySet()));
  }

  private void sendTable(MasterState s, String shardId) {
    blocks.updateTableMembership(shardId, s.membershipEpoch(), List.copyOf(s.members().keySet()));
  }
}
