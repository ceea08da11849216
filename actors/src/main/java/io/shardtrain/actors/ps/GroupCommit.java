package io.shardtrain.actors.ps;

import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Async pushes accepted but not journaled yet, so that every push that arrives while a journal
 * write is in flight goes out in the next write, together: one {@code persistAll} instead of one
 * write per push. A push waits here neither applied nor acknowledged; the write applies the group
 * in arrival order (the order a replay applies it in) and then acknowledges each push. A push that
 * repeats one waiting here (its trainer sent it again) is answered as a duplicate after that write,
 * not before, so no acknowledgement ever precedes the journal. Held in memory by the block's actor.
 */
final class GroupCommit {

  /**
   * A push's event, and the acknowledgement its sender gets once the group is journaled; the event
   * is null for a push that repeats one of the group.
   */
  record Waiting(GradientApplied event, PendingAck ack) {}

  private final List<Waiting> waiting = new ArrayList<>();
  private final List<Waiting> repeats = new ArrayList<>();

  /** Adds a push; true when it is the first of a new group (the caller then asks for the write). */
  boolean add(GradientApplied event, PendingAck ack) {
    waiting.add(new Waiting(event, ack));
    return waiting.size() == 1;
  }

  /** A push that repeats one waiting here: {@code ack} is sent with the group's acknowledgements. */
  void repeat(PendingAck ack) {
    repeats.add(new Waiting(null, ack));
  }

  boolean isEmpty() {
    return waiting.isEmpty();
  }

  /** How many updates wait: the version a new push would be applied at is the block's plus this. */
  int size() {
    return waiting.size();
  }

  /** Whether the push of {@code trainer} at {@code step} or a later step of it waits here. */
  boolean holdsUpTo(String trainer, long step) {
    for (Waiting w : waiting) {
      if (w.event().trainerId().equals(trainer) && w.event().step() >= step) return true;
    }
    return false;
  }

  /** Removes and returns the group, in arrival order, then its repeats. */
  List<Waiting> take() {
    List<Waiting> out = new ArrayList<>(waiting.size() + repeats.size());
    out.addAll(waiting);
    out.addAll(repeats);
    waiting.clear();
    repeats.clear();
    return Collections.unmodifiableList(out);
  }

  /** The events a group taken from here journals: its pushes', in order. */
  static List<BlockEvents.Event> events(List<Waiting> group) {
    List<BlockEvents.Event> events = new ArrayList<>(group.size());
    for (Waiting w : group) {
      if (w.event() != null) events.add(w.event());
    }
    return events;
  }
}
