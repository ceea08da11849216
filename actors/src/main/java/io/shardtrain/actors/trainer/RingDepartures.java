package io.shardtrain.actors.trainer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The handshake that lets an all-reduce member leave only once every other member applied the
 * step it leaves after. A member finishes a step on the last mean it receives, possibly before its
 * own last mean has reached the member after it; had it left at once, the master's word of the
 * smaller ring could reach that member before the mean did, and that member would redo the step
 * alone, on its own gradients: the two would leave with different replicas. So a leaving member
 * says after which step it leaves ({@link RingLink.LeavesAfter}), every other member answers once
 * it applied that step ({@link RingLink.AppliedUpTo}), and the leaving member waits for every
 * answer, or for a newer membership (a member died meanwhile and will not answer: the master
 * drops it within {@code failure-timeout}).
 */
final class RingDepartures {
  private final String self;
  /** Sends a member (by trainer id) a message. */
  private final BiConsumer<String, Trainer.Ring> tell;
  /** Members leaving after a step this member has not applied yet: trainer id to step. */
  private final Map<String, Long> toAnswer = new HashMap<>();
  /** The members this one, leaving, still waits for. */
  private final Set<String> unanswered = new HashSet<>();
  private long leavingAfter = -1;

  /** The handshake of member {@code self}, which reaches the others through {@code tell}. */
  RingDepartures(String self, BiConsumer<String, Trainer.Ring> tell) {
    this.self = self;
    this.tell = tell;
  }

  /**
   * A member leaves after a step: answered at once when this member's last applied step,
   * {@code lastStep}, is that step or later, else from {@link #applied} once it is.
   */
  void leaves(RingLink.LeavesAfter m, long lastStep) {
    if (lastStep >= m.step()) {
      toAnswer.remove(m.trainerId());
      tell.accept(m.trainerId(), new RingLink.AppliedUpTo(self, lastStep));
    } else {
      toAnswer.merge(m.trainerId(), m.step(), Math::max);
    }
  }

  /** This member applied every step up to {@code lastStep}: answers the leaving members waiting for it. */
  void applied(long lastStep) {
    List<String> now = new ArrayList<>();
    toAnswer.entrySet().removeIf(e -> e.getValue() <= lastStep && now.add(e.getKey()));
    for (String m : now) tell.accept(m, new RingLink.AppliedUpTo(self, lastStep));
  }

  /** This member leaves after step {@code step}: tells every other of {@code members} and waits for them. */
  void leave(long step, Collection<String> members) {
    leavingAfter = step;
    unanswered.clear();
    for (String m : members) {
      if (m.equals(self)) continue;
      unanswered.add(m);
      tell.accept(m, new RingLink.LeavesAfter(self, step));
    }
  }

  /** A member's answer: it applied every step up to the one it names. */
  void answered(RingLink.AppliedUpTo m) {
    if (m.step() >= leavingAfter) unanswered.remove(m.trainerId());
  }

  /** Whether every member this one waits for applied the step it leaves after. */
  boolean allAnswered() {
    return unanswered.isEmpty();
  }
}
