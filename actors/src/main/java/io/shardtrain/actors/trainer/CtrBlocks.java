package io.shardtrain.actors.trainer;

import io.shardtrain.actors.ps.BlockClient;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.transport.WirePrecision;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The dense half of a {@link CtrTrainer}'s exchange: pushes of the dense gradient to the job's
 * blocks (kept until answered, so a retry sends the same request under the same key), each
 * carrying the block's pull, whose values come back with its ack; pulls on their own; and the
 * blocks' values written into the trainer's dense array. Remembers each block's pulled version,
 * the base version of the next push to it.
 */
final class CtrBlocks {
  /** What the trainer does with a push's answer. */
  enum Outcome {
    /** The block has the step (applied, taken into the barrier, a duplicate, or refused as stale). */
    ACKED,
    /** The client sent it again already. */
    BOUNCED,
    /** No answer in time: send it again after a pause. */
    RETRY,
    /** The block refused it for good. */
    REFUSED
  }

  private final BlockClient<Trainer.Command> client;
  private final TrainerCounts counts;
  private final Map<String, Long> pulledVersion = new HashMap<>();
  private final Map<String, BlockClient.PushRequest> unanswered = new HashMap<>();
  private String refusal;

  CtrBlocks(BlockClient<Trainer.Command> client, TrainerCounts counts) {
    this.client = client;
    this.counts = counts;
  }

  /**
   * Pushes {@code values} of {@code weight} examples to {@code block} as {@code step}, with the pull
   * of its values at version {@code valuesFrom} or later, which come back with the ack.
   */
  void push(String block, long step, long membershipEpoch, float weight, float[] values, long generation,
      BlockProtocol.TaskMark mark, long valuesFrom) {
    BlockClient.PushRequest p = new BlockClient.PushRequest(block, step, pulledVersion.getOrDefault(block, 0L),
        membershipEpoch, weight, values, generation, mark, WirePrecision.FP32, valuesFrom);
    unanswered.put(block, p);
    counts.pushStarted();
    counts.pullStarted();
    client.push(p);
  }

  /** Sends {@code block}'s push of {@code step} again, if it is still unanswered. */
  void resend(String block, long step) {
    BlockClient.PushRequest p = unanswered.get(block);
    if (p != null && p.step() == step) client.push(p);
  }

  /**
   * Sends {@code st}'s late requests again ({@link CtrStep#overdue}): the dense blocks' pushes and
   * pulls, but not to a block whose node the cluster holds unreachable, and the rows' push through
   * {@code rowsAgain}. Returns what went, or null when nothing did.
   */
  CtrStep.Late sendOverdueAgain(CtrStep st, long generation, Duration after, Runnable rowsAgain) {
    CtrStep.Late late = st.overdue(System.nanoTime(), after.toNanos());
    client.answerable(late.pushes());
    client.answerable(late.pulls());
    if (late.isEmpty()) return null;
    for (String block : late.pushes()) resend(block, st.step);
    for (String block : late.pulls()) client.pull(new BlockClient.PullRequest(block, st.pulls.minVersion(), generation));
    if (late.rows()) rowsAgain.run();
    return late;
  }

  /** The same for a pull round outside a step (after the registration, before the evaluation); returns what went. */
  List<String> sendOverdueAgain(PullRound round, long generation, Duration after) {
    List<String> late = client.answerable(round.overdue(System.nanoTime(), after.toNanos(), block -> false));
    for (String block : late) client.pull(new BlockClient.PullRequest(block, round.minVersion(), generation));
    return late;
  }

  void pull(String block, long minVersion, long generation) {
    counts.pullStarted();
    client.pull(new BlockClient.PullRequest(block, minVersion, generation));
  }

  Outcome pushed(BlockExchange.PushAnswer m) {
    BlockClient.Result<BlockProtocol.PushAck> r = client.outcome(m.reply());
    switch (r.delivery()) {
      case BOUNCED:
        return Outcome.BOUNCED;
      case TIMED_OUT:
        return Outcome.RETRY;
      case REFUSED:
        refusal = r.reason();
        return Outcome.REFUSED;
      default:
        break;
    }
    if (r.value() instanceof BlockProtocol.RolledBack b) {
      refusal = "the block went back to a checkpoint at version " + b.version();
      return Outcome.REFUSED;
    }
    if (r.value() instanceof BlockProtocol.Stale) counts.stalePush();
    unanswered.remove(m.block());
    return Outcome.ACKED;
  }

  /** Why the last push answered {@link Outcome#REFUSED} was, in words. */
  String refusal() {
    return refusal;
  }

  /**
   * Takes a pull's answer into {@code round}, writing the values into {@code dense} (the one dense
   * parameter's floats); one that did not deliver is sent again. True when it brought one of the
   * round's blocks.
   */
  boolean pulled(float[] dense, PullRound round, BlockExchange.PullAnswer m) {
    if (m.minVersion() != round.minVersion() || !round.awaits(m.block())) return false;
    BlockClient.Result<BlockProtocol.BlockValues> r = client.outcome(m.reply());
    if (r.delivery() == BlockClient.Delivery.BOUNCED) return false;
    if (r.delivery() != BlockClient.Delivery.DELIVERED) {
      client.pull(m.reply().request());
      return false;
    }
    return take(dense, round, m.block(), r.value());
  }

  /**
   * Takes the values an acknowledged push brought into {@code round}, as {@link #pulled} takes a
   * pull's; an ack without the values its push asked for is followed by a pull. True when it
   * brought one of the round's blocks.
   */
  boolean pulledWithAck(float[] dense, PullRound round, BlockExchange.PushAnswer m) {
    if (!round.pulledBy(m.reply().request())) return false;
    if (m.reply().values() == null) {
      client.pull(new BlockClient.PullRequest(m.block(), round.minVersion(), m.generation()));
      return false;
    }
    return take(dense, round, m.block(), m.reply().values());
  }

  private boolean take(float[] dense, PullRound round, String block, BlockProtocol.BlockValues v) {
    System.arraycopy(v.values(), 0, dense, v.offset(), v.values().length);
    pulledVersion.put(block, v.version());
    return round.received(block, v.version());
  }
}
