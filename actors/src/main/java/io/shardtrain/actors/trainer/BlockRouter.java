package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockLetters;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * How a trainer reaches each parameter block. Pushes and pulls go through Cluster Sharding, inline,
 * until a pull's reply names the block's actor and the bulk address of its node; from then on,
 * with this node's bulk channel on ({@code shardtrain.transport.bulk.enabled}), gradients of at
 * least {@code min-floats} floats and pulls go to that actor by bulk letter, and pulled values come
 * back over the channel. A letter that does not get through (the block moved, or its node is gone
 * or has the channel off) forgets the route, so the retry goes through sharding; a block that could
 * not send its values by bulk sends them inline and names no route.
 *
 * <p>Replies come back to the trainer as {@link Pushed} and {@link Pulled}, which
 * {@link #pushOutcome} and {@link #pullOutcome} turn into typed outcomes: what the trainer does
 * next depends on the {@link Delivery} only.
 */
final class BlockRouter {

  /** How a push or pull ended. */
  enum Delivery {
    /** The block answered. */
    DELIVERED,
    /** A letter did not get through: try again at once, through sharding. */
    BOUNCED,
    /** No answer in time: the block may be moving, or its node dying. */
    TIMED_OUT,
    /** The block answered with an error. */
    REFUSED
  }

  /** An outcome: the block's answer when {@link Delivery#DELIVERED}, else why not. */
  record Result<T>(Delivery delivery, T value, String reason) {
    static <T> Result<T> delivered(T value) {
      return new Result<>(Delivery.DELIVERED, value, null);
    }

    static <T> Result<T> failed(Delivery delivery, String reason) {
      return new Result<>(delivery, null, reason);
    }
  }

  /** A trainer's gradient for {@code block} at {@code step}; the same request again on every retry. */
  record Push(String block, long step, long baseVersion, long membershipEpoch, float weight, float[] values,
      long generation, BlockProtocol.TaskMark mark) {}

  /** The reply to a push of {@code step} made in rollback generation {@code generation}. */
  record Pushed(long generation, String block, long step, boolean byLetter, BlockProtocol.PushAck ack,
      Throwable failure) implements Trainer.Internal {}

  /** The reply to a pull of version {@code minVersion} or later made in rollback generation {@code generation}. */
  record Pulled(long generation, String block, long minVersion, boolean byLetter, BlockProtocol.BlockValues values,
      Throwable failure) implements Trainer.Internal {}

  /** A block's actor and the bulk address of its node. */
  private record LetterRoute(BulkAddress node, ActorRef<BlockProtocol.Command> block) {}

  private static final float[] NO_FLOATS = new float[0];

  private final ActorContext<Trainer.Command> context;
  private final String trainerId;
  private final TrainerSettings settings;
  private final ClusterSharding sharding;
  /** This node's bulk channel, or null when it is off. */
  private final BulkTransport bulk;
  private final BulkAddress selfBulk;
  private final Map<String, EntityRef<BlockProtocol.Command>> entities = new HashMap<>();
  /** Per block, where its letters go, from its last bulk pull reply; absent: through sharding. */
  private final Map<String, LetterRoute> routes = new HashMap<>();

  BlockRouter(ActorContext<Trainer.Command> context, String trainerId, TrainerSettings settings) {
    this.context = context;
    this.trainerId = trainerId;
    this.settings = settings;
    this.sharding = ClusterSharding.get(context.getSystem());
    BulkTransport transport = BulkTransport.get(context.getSystem());
    this.bulk = transport.isEnabled() ? transport : null;
    this.selfBulk = bulk == null ? null : BulkAddress.of(bulk.address());
  }

  /** Sends {@code push}; its reply comes back as {@link Pushed}. */
  void push(Push p) {
    String block = p.block();
    LetterRoute route = routes.get(block);
    // An empty push (nothing for this block this step) has no floats for the channel to carry.
    if (bulk != null && route != null && p.values().length > 0 && bulk.settings().carries(p.values().length)) {
      // The gradient and the push in one bulk frame, straight to the block's actor.
      context.pipeToSelf(
          bulk.<BlockProtocol.PushAck>askWithStatus(route.node().socketAddress(),
              replyTo -> new BlockLetters.PushLetter(route.block(), selfBulk, gradient(p, null, replyTo)),
              p.values(), 0, p.values().length, settings.askTimeout()),
          (ack, failure) -> new Pushed(p.generation(), block, p.step(), true, ack, failure));
      return;
    }
    context.askWithStatus(BlockProtocol.PushAck.class, entity(block), settings.askTimeout(),
        replyTo -> gradient(p, p.values(), replyTo),
        (ack, failure) -> new Pushed(p.generation(), block, p.step(), false, ack, failure));
  }

  private BlockProtocol.PushGradient gradient(Push p, float[] values,
      ActorRef<StatusReply<BlockProtocol.PushAck>> replyTo) {
    return new BlockProtocol.PushGradient(trainerId, p.step(), p.baseVersion(), p.membershipEpoch(), p.weight(),
        values, p.generation(), p.mark(), replyTo);
  }

  /** Asks {@code block} for its values at version {@code minVersion} or later; they come back as {@link Pulled}. */
  void pull(String block, long minVersion, long generation) {
    LetterRoute route = routes.get(block);
    if (route != null) {
      context.pipeToSelf(
          bulk.<BlockProtocol.BlockValues>askWithStatus(route.node().socketAddress(),
              replyTo -> new BlockLetters.PullLetter(route.block(),
                  new BlockProtocol.Pull(minVersion, selfBulk, replyTo)),
              NO_FLOATS, 0, 0, settings.pullTimeout()),
          (v, failure) -> new Pulled(generation, block, minVersion, true, v, failure));
      return;
    }
    context.askWithStatus(BlockProtocol.BlockValues.class, entity(block), settings.pullTimeout(),
        replyTo -> new BlockProtocol.Pull(minVersion, selfBulk, replyTo),
        (v, failure) -> new Pulled(generation, block, minVersion, false, v, failure));
  }

  private EntityRef<BlockProtocol.Command> entity(String block) {
    return entities.computeIfAbsent(block, id -> sharding.entityRefFor(ParameterBlock.ENTITY_KEY, id));
  }

  /** The outcome of a push; a bounced letter forgets the block's route, so the retry goes through sharding. */
  Result<BlockProtocol.PushAck> pushOutcome(Pushed m) {
    Result<BlockProtocol.PushAck> r = classify(m.byLetter(), m.ack(), m.failure());
    if (r.delivery() == Delivery.BOUNCED) routes.remove(m.block());
    return r;
  }

  /**
   * The outcome of a pull. Values from another node's block that came by bulk name where the
   * block's letters go from now on; a failed pull forgets that, so the retry goes through sharding.
   */
  Result<BlockProtocol.BlockValues> pullOutcome(Pulled m) {
    Result<BlockProtocol.BlockValues> r = classify(m.byLetter(), m.values(), m.failure());
    if (r.delivery() != Delivery.DELIVERED) {
      routes.remove(m.block());
      return r;
    }
    BlockProtocol.BlockValues v = r.value();
    if (v.node() != null && v.block() != null && !v.node().equals(selfBulk)) {
      routes.put(m.block(), new LetterRoute(v.node(), v.block()));
    } else {
      routes.remove(m.block());
    }
    return r;
  }

  /** How a reply ended, by the way it came (letter or sharding) and the failure's type only. */
  static <T> Result<T> classify(boolean byLetter, T value, Throwable failure) {
    if (failure == null) return Result.delivered(value);
    String reason = String.valueOf(failure.getMessage());
    // A letter's failure, timeout included: the block's actor may have stopped (it moved), or its node is gone.
    if (byLetter) return Result.failed(Delivery.BOUNCED, reason);
    if (failure instanceof TimeoutException) return Result.failed(Delivery.TIMED_OUT, reason);
    return Result.failed(Delivery.REFUSED, reason);
  }
}
