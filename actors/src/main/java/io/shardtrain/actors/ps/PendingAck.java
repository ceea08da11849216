package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.ValuesWanted;
import java.util.function.LongFunction;

/**
 * A push's acknowledgement that waits until what the push did is journaled: {@code ack} of the
 * block's version at that moment, for {@code replyTo}, with the values the push asked for in
 * {@code wanted} (null: none).
 */
record PendingAck(ActorRef<StatusReply<PushAck>> replyTo, LongFunction<PushAck> ack, ValuesWanted wanted) {

  /** Whether this acknowledgement waits to bring values back. */
  boolean wantsValues() {
    return wanted != null;
  }
}
