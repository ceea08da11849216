package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import java.util.function.LongFunction;

/**
 * A push's acknowledgement that waits until what the push did is journaled: {@code ack} of the
 * block's version at that moment, for {@code replyTo}.
 */
record PendingAck(ActorRef<StatusReply<PushAck>> replyTo, LongFunction<PushAck> ack) {}
