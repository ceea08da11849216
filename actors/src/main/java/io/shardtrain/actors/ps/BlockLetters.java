package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.LetterPush;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.WithValues;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.actors.transport.WirePrecision;

/**
 * The block data path's bulk letters: a push or pull sent straight to a block's actor over the
 * bulk channel, and the block's replies sent back the same way. Each is a {@link BlockProtocol}
 * message in an envelope whose floats travel as the frame's payload; {@link BlockClient} sends the
 * requests and {@link BlockReplies} the replies, and {@link WireSerializer} writes them.
 */
public final class BlockLetters {
  private BlockLetters() {}

  /**
   * A push sent straight to the block's actor ({@code block}, from {@link BlockValues#block()}) over
   * the bulk channel, its gradient as the frame's floats; the block acknowledges with an
   * {@link AckLetter} to {@code replyBulk}. A block that moved never gets it: the letter bounces
   * (an error reply at once) and the sender pushes through sharding again. The frame carries the
   * gradient in the push's precision.
   */
  public record PushLetter(ActorRef<Command> block, BulkAddress replyBulk, PushGradient push)
      implements BulkTransport.Letter {
    public PushLetter {
      if (block == null || replyBulk == null || push == null) {
        throw new IllegalArgumentException("a push letter needs the block, the reply address and the push");
      }
    }

    @Override
    public ActorRef<?> recipient() {
      return block;
    }

    @Override
    public WirePrecision precision() {
      return push.precision();
    }

    @Override
    public Object open(float[] values) {
      return new LetterPush(push.withValues(values), replyBulk);
    }

    @Override
    public void bounce(String reason) {
      push.replyTo().tell(StatusReply.error("push letter for step " + push.step() + " not delivered: " + reason));
    }
  }

  /**
   * A pull sent straight to the block's actor over the bulk channel (no floats); {@code pull} must
   * name the puller's bulk address, where the values come back as a {@link ValuesLetter}.
   */
  public record PullLetter(ActorRef<Command> block, Pull pull) implements BulkTransport.Letter {
    public PullLetter {
      if (block == null || pull == null || pull.replyBulk() == null) {
        throw new IllegalArgumentException("a pull letter needs the block and a pull with a bulk reply address");
      }
    }

    @Override
    public ActorRef<?> recipient() {
      return block;
    }

    @Override
    public Object open(float[] values) {
      return pull;
    }

    @Override
    public void bounce(String reason) {
      pull.replyTo().tell(StatusReply.error("pull letter for version " + pull.minVersion() + " not delivered: "
          + reason));
    }
  }

  /**
   * A replica's publication (all-reduce mode) sent straight to the block's actor over the bulk
   * channel, its values as the frame's floats; the block answers {@code publish}'s reply address.
   */
  public record PublishLetter(ActorRef<Command> block, Publish publish) implements BulkTransport.Letter {
    public PublishLetter {
      if (block == null || publish == null) throw new IllegalArgumentException("a publish letter needs the block and the publish");
    }

    @Override
    public ActorRef<?> recipient() {
      return block;
    }

    @Override
    public Object open(float[] values) {
      return publish.withValues(values);
    }

    @Override
    public void bounce(String reason) {
      publish.replyTo().tell(StatusReply.error("publish letter for step " + publish.step() + " not delivered: "
          + reason));
    }
  }

  /**
   * A block's success reply to a {@link PushLetter}, by letter too: no floats, or, for a
   * {@link WithValues} acknowledgement, the block's values as the frame's floats.
   */
  public record AckLetter(ActorRef<StatusReply<PushAck>> replyTo, PushAck ack) implements BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return replyTo;
    }

    @Override
    public Object open(float[] values) {
      if (ack instanceof WithValues w) {
        return StatusReply.success(new WithValues(w.ack(), w.values().withValues(values)));
      }
      return StatusReply.success(ack);
    }
  }

  /** A block's reply to a {@link Pull} with a bulk address: the values are the frame's floats. */
  public record ValuesLetter(ActorRef<StatusReply<BlockValues>> replyTo, BlockValues values)
      implements BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return replyTo;
    }

    @Override
    public Object open(float[] floats) {
      return StatusReply.success(values.withValues(floats));
    }
  }
}
