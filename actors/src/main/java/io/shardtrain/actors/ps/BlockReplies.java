package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockLetters.AckLetter;
import io.shardtrain.actors.ps.BlockLetters.ValuesLetter;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.LetterPush;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.ValuesWanted;
import io.shardtrain.actors.ps.BlockProtocol.WithValues;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import java.util.HashMap;
import java.util.Map;

/**
 * The block-facing side of the block data path: how a block answers pushes and pulls, as messages
 * or by letter over this node's bulk channel, a push that came by letter with an {@link AckLetter}
 * and a pull that gave a bulk address with a {@link ValuesLetter}. A reply letter that cannot be
 * sent becomes a message (the same ack, or the same values without a route), so a pusher or
 * puller always gets its answer and never has to tell a bulk failure from the block's own errors.
 * Used by the block's actor only.
 */
final class BlockReplies {
  private static final float[] NO_FLOATS = new float[0];

  private final ActorContext<Command> context;
  private final String entityId;
  private final BlockCounters counters;
  /** Pushes that came by letter and are not answered yet: where their reply letters go. */
  private final Map<ActorRef<?>, BulkAddress> letterReplies = new HashMap<>();
  private BulkTransport bulk;
  /** This node's bulk address, once the channel is up; it never changes. */
  private BulkAddress bulkAddress;

  BlockReplies(ActorContext<Command> context, String entityId, BlockCounters counters) {
    this.context = context;
    this.entityId = entityId;
    this.counters = counters;
  }

  /** The push that came by letter in {@code m}; its ack goes back by letter too. */
  PushGradient opened(LetterPush m) {
    counters.bulkPushes++;
    letterReplies.put(m.push().replyTo(), m.replyBulk());
    return m.push();
  }

  /**
   * Answers a push with {@code ack}, and with {@code state}'s values when the push asked for them
   * ({@code wanted}) and the block has reached the version it wants: by letter when the push came
   * by letter (the values as the frame's floats, where the channel carries that many), else as a
   * message.
   */
  void ack(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack, ValuesWanted wanted, BlockState state) {
    BulkAddress to = letterReplies.remove(replyTo);
    BlockValues values = null;
    if (wanted != null && state.version() >= wanted.minVersion()) {
      values = values(state, wanted.replyBulk());
      counters.meters.pulled(values.values().length);
    }
    if (to == null || (values != null && !bulk().settings().carries(values.values().length))) {
      replyTo.tell(StatusReply.success(values == null ? ack : new WithValues(ack, values)));
      return;
    }
    float[] floats = values == null ? NO_FLOATS : values.values();
    PushAck inLetter = values == null ? ack : new WithValues(ack, values.withValues(null));
    // Sent again as a message if the letter fails: values then name no route, as a pull's would.
    PushAck fallback = values == null ? ack : new WithValues(ack, values.withoutRoute());
    if (values != null) counters.bulkPulls++;
    bulk().sendLetter(to.socketAddress(), new AckLetter(replyTo, inLetter), floats, 0, floats.length)
        .whenComplete((done, failure) -> {
          // The sender's node may be gone; if not, the message finds it over Artery.
          if (failure != null) replyTo.tell(StatusReply.success(fallback));
        });
  }

  /** An error reply, always as a message; the block's stats keep the last one. */
  <T> void error(ActorRef<StatusReply<T>> replyTo, String message) {
    counters.failed(message);
    letterReplies.remove(replyTo);
    if (replyTo != null) replyTo.tell(StatusReply.error(message));
  }

  /**
   * Answers {@code pull}: inline, or, when the pull gave a bulk address of another node and this
   * node's bulk channel carries payloads of this size, as a {@link ValuesLetter} sent there. Either
   * way the version's own array, which no update changes (copy-on-write). With a bulk address the
   * reply names this block's actor, so the puller can push to it by letter; a letter that cannot be
   * sent there becomes an inline reply that names neither, so the puller stops using letters to a
   * block that cannot answer it by letter.
   */
  void answer(BlockState state, Pull pull) {
    float[] values = state.values;
    BulkAddress to = pull.replyBulk();
    ActorRef<StatusReply<BlockValues>> replyTo = pull.replyTo();
    counters.meters.pulled(values.length);
    BlockValues reply = values(state, to);
    if (reply.node() == null || to.equals(reply.node()) || !bulk().settings().carries(values.length)) {
      replyTo.tell(StatusReply.success(reply));
      return;
    }
    counters.bulkPulls++;
    org.slf4j.Logger log = context.getSystem().log();
    String block = entityId;
    bulk().sendLetter(to.socketAddress(), new ValuesLetter(replyTo, reply.withValues(null)), values, 0, values.length)
        .whenComplete((done, failure) -> {
          if (failure == null) return;
          log.warn("block {}: values of version {} could not go by letter to {} ({}); answering inline", block,
              reply.version(), to, failure.getMessage());
          // Artery may still reach the puller, whose node's bulk channel is out of reach.
          replyTo.tell(StatusReply.success(reply.withoutRoute()));
        });
  }

  /**
   * The block's values at its version, the version's own array; naming this node's bulk address
   * and the block's actor when the asker gave a bulk address ({@code replyBulk}) and the channel is on.
   */
  private BlockValues values(BlockState state, BulkAddress replyBulk) {
    BlockSpec spec = state.spec();
    if (replyBulk == null || !bulk().isEnabled()) {
      return new BlockValues(spec.parameter(), spec.index(), spec.offset(), state.version(), state.values);
    }
    return new BlockValues(spec.parameter(), spec.index(), spec.offset(), state.version(), state.values,
        bulkAddress(), context.getSelf());
  }

  private BulkTransport bulk() {
    // Started on first use: blocks that only ever see inline traffic open no socket.
    if (bulk == null) bulk = BulkTransport.get(context.getSystem());
    return bulk;
  }

  /** Where this node's bulk channel takes payloads; only while it is enabled. */
  private BulkAddress bulkAddress() {
    if (bulkAddress == null) bulkAddress = BulkAddress.of(bulk().address());
    return bulkAddress;
  }
}
