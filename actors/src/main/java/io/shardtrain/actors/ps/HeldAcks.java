package io.shardtrain.actors.ps;

import akka.actor.typed.ActorRef;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * Sync acknowledgements that wait for their step to be applied: with exact durability a push is
 * journaled as part of its step, so it is acknowledged when that step is, not when it arrives.
 * Held in memory by the block's actor.
 */
final class HeldAcks {

  /** An acknowledgement to send once the block reached {@code step}: {@code ack} of the version then. */
  record Held(long step, ActorRef<StatusReply<PushAck>> replyTo, LongFunction<PushAck> ack) {}

  private final TreeMap<Long, List<Held>> byStep = new TreeMap<>();

  void add(long step, ActorRef<StatusReply<PushAck>> replyTo, LongFunction<PushAck> ack) {
    byStep.computeIfAbsent(step, s -> new ArrayList<>()).add(new Held(step, replyTo, ack));
  }

  boolean isEmpty() {
    return byStep.isEmpty();
  }

  /** Removes and returns, oldest step first and in arrival order, the acknowledgements {@code version} reached. */
  List<Held> takeReached(long version) {
    if (byStep.isEmpty() || byStep.firstKey() > version) return List.of();
    Map<Long, List<Held>> reached = byStep.headMap(version, true);
    List<Held> out = new ArrayList<>();
    for (List<Held> l : reached.values()) out.addAll(l);
    reached.clear();
    return out;
  }

  /** Removes and returns every held acknowledgement. */
  List<Held> takeAll() {
    List<Held> out = new ArrayList<>();
    for (List<Held> l : byStep.values()) out.addAll(l);
    byStep.clear();
    return out;
  }
}
