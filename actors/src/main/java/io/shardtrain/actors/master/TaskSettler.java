package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;

/**
 * Settles the task a departed trainer held before anyone leases it again. The trainer may have
 * pushed steps after the last offset it reported, to some blocks or to all; every push names its
 * task and reader offset ({@link BlockProtocol.TaskMark}), so every block is asked how far it holds
 * the task ({@link BlockProtocol.GetTaskMark}). Once all answered, the offset every block holds
 * becomes the task's, and the blocks that hold more are named, so the next trainer pushes nothing
 * to those for the examples they already have: no example is skipped or applied twice by any
 * block ({@link Master.TaskSettled}). The answers are not journaled: a recovered master asks again.
 */
final class TaskSettler {
  private final BlockRequests blocks;
  private final Logger log;
  /** Per settling task ("epoch/task"): the blocks' answers so far. */
  private final Map<String, Map<String, BlockProtocol.TaskProgress>> answers = new HashMap<>();
  /** "epoch/task block" for every question still out, so a tick does not ask again meanwhile. */
  private final Set<String> asked = new HashSet<>();

  TaskSettler(BlockRequests blocks, Logger log) {
    this.blocks = blocks;
    this.log = log;
  }

  static String taskKey(int epoch, int task) {
    return epoch + "/" + task;
  }

  /** Asks every block that has not answered, and is not being asked, how far it holds each settling task. */
  void askMissing(MasterState s) {
    // All-reduce blocks see no pushes: the ring settles its departed members' tasks (fromRing).
    if (s.job() == null || s.job().mode() == BlockSpec.Mode.ALLREDUCE) return;
    for (TaskState t : s.settling()) {
      String key = taskKey(t.epoch, t.index);
      Map<String, BlockProtocol.TaskProgress> got = answers.computeIfAbsent(key, k -> new HashMap<>());
      for (String block : s.job().blocks()) {
        if (got.containsKey(block) || !asked.add(key + " " + block)) continue;
        blocks.getTaskMark(block, t.epoch, t.index, s.generation());
      }
    }
  }

  /**
   * Block {@code blockId}'s answer (or failure) for task {@code task} of epoch {@code epoch}, asked
   * in rollback generation {@code generation}: the task's settlement once every block answered,
   * else null. A failed block is asked again by the next {@link #askMissing}.
   */
  Master.TaskSettled answered(MasterState s, int epoch, int task, String blockId, long generation,
      BlockProtocol.TaskProgress progress, Throwable failure) {
    String key = taskKey(epoch, task);
    asked.remove(key + " " + blockId);
    TaskState t = s.task(epoch, task);
    if (generation != s.generation() || t == null || t.settlingFor == null) return null;
    if (failure != null) {
      // A block of a lost node answers once sharding restarted it.
      log.info("task {}: block {} did not say how far it got ({})", key, blockId, failure.getMessage());
      return null;
    }
    Map<String, BlockProtocol.TaskProgress> got = answers.computeIfAbsent(key, k -> new HashMap<>());
    got.put(blockId, progress);
    if (!got.keySet().containsAll(s.job().blocks())) return null;
    answers.remove(key);
    return settle(t, s.job().blocks(), got);
  }

  /**
   * All-reduce: the settlements of every task a departed (or restarted) trainer held, from the
   * marks of ring {@code c}; none when the ring is not of the current membership and generation (a newer ring
   * sends again).
   */
  static List<Master.TaskSettled> fromRing(MasterState s, JobProtocol.SettleFromRing c) {
    if (c.generation() != s.generation() || c.membershipEpoch() != s.membershipEpoch()) return List.of();
    List<Master.TaskSettled> out = new ArrayList<>();
    for (TaskState t : s.settling()) {
      // Its trainer left, or restarted (a new actor under the same id, which has not read it since).
      long offset = t.offset;
      long step = 0;
      for (JobProtocol.RingMark m : c.marks()) {
        if (m.trainerId().equals(t.settlingFor) && m.epoch() == t.epoch && m.task() == t.index && m.offset() > offset) {
          offset = Math.min(t.length(), m.offset());
          step = m.step();
        }
      }
      out.add(new Master.TaskSettled(t.epoch, t.index, t.settlingFor, offset, step, Map.of()));
    }
    return out;
  }

  /** Logs a settlement that found blocks ahead of the offset {@code reported}. */
  void logAhead(Master.TaskSettled settled, long reported) {
    if (settled.offset() <= reported && settled.skip().isEmpty()) return;
    log.warn("task {} of trainer {}: every block holds it up to offset {} (reported: {}){}",
        taskKey(settled.epoch(), settled.task()), settled.trainerId(), settled.offset(), reported,
        settled.skip().isEmpty() ? "" : "; blocks ahead, not pushed to again: " + settled.skip());
  }

  /** Forgets every answer: after a rollback the blocks hold nothing of a departed trainer's steps. */
  void clear() {
    answers.clear();
  }

  /** Where task {@code t} resumes, given every one of {@code blocks}' answer. */
  static Master.TaskSettled settle(TaskState t, List<String> blocks,
      Map<String, BlockProtocol.TaskProgress> answers) {
    // Each block holds the task up to the reported offset or its own mark, whichever is further.
    Map<String, Long> held = new TreeMap<>();
    long offset = Long.MAX_VALUE;
    for (String block : blocks) {
      long at = Math.min(t.length(), Math.max(t.offset, answers.get(block).offset()));
      held.put(block, at);
      offset = Math.min(offset, at);
    }
    long step = 0;
    Map<String, Long> skip = new TreeMap<>();
    for (String block : blocks) {
      long at = held.get(block);
      if (at > offset) skip.put(block, at);
      if (at == offset && offset > t.offset) step = Math.max(step, answers.get(block).step());
    }
    return new Master.TaskSettled(t.epoch, t.index, t.settlingFor, offset, step, skip);
  }
}
