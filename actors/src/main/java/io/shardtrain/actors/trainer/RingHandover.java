package io.shardtrain.actors.trainer;

import io.shardtrain.actors.allreduce.Replica;
import io.shardtrain.actors.allreduce.StepReduction;
import io.shardtrain.actors.job.JobProtocol;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What an all-reduce member keeps so that a re-formed ring can go on exactly: the newest task mark
 * of every member that had data (learned from each step's chunks), and the replica handed from a
 * member at the ring's newest step to one behind it ({@link RingLink.TransferPart}s and a
 * {@link RingLink.TransferEnd}, in any order).
 */
final class RingHandover {
  /** Per trainer: {task epoch, task, offset after, step} of its newest step with data. */
  private final Map<String, long[]> marks = new HashMap<>();
  /** What came of the transfer of ({@link #epoch}, {@link #step}): parts may arrive before their member waits for them. */
  private final Map<Integer, float[]> partsIn = new HashMap<>();
  private RingLink.TransferEnd endIn;
  private long epoch = -1;
  private long step = -1;

  /** Takes in the marks of step {@code step} ({@link StepReduction#marks()}) of the ring {@code members}. */
  void stepApplied(long step, long[] stepMarks, List<String> members) {
    for (int k = 0; k < stepMarks.length; k += StepReduction.MARK) {
      marks.put(members.get((int) stepMarks[k]), new long[] {stepMarks[k + 1], stepMarks[k + 2], stepMarks[k + 3], step});
    }
  }

  /**
   * The newest mark of every trainer: a departed one's, and a restarted one's (its old actor read
   * a task the master now settles).
   */
  List<JobProtocol.RingMark> marks() {
    List<JobProtocol.RingMark> out = new ArrayList<>();
    for (Map.Entry<String, long[]> e : marks.entrySet()) {
      long[] m = e.getValue();
      out.add(new JobProtocol.RingMark(e.getKey(), (int) m[0], (int) m[1], m[2], m[3]));
    }
    return out;
  }

  /** The end of a transfer of {@code replica} after {@code step} in ring epoch {@code epoch}. */
  RingLink.TransferEnd end(long epoch, long step, Replica replica, boolean leaving) {
    List<String> ids = new ArrayList<>(marks.keySet());
    long[] flat = new long[ids.size() * 4];
    for (int i = 0; i < ids.size(); i++) System.arraycopy(marks.get(ids.get(i)), 0, flat, 4 * i, 4);
    return new RingLink.TransferEnd(epoch, step, replica.parts(), replica.examplesApplied(), replica.updates(),
        leaving, ids, flat);
  }

  /** Keeps what came of the transfer after {@code step} in ring epoch {@code epoch}; drops anything else. */
  void expect(long epoch, long step) {
    if (epoch == this.epoch && step == this.step) return;
    partsIn.clear();
    endIn = null;
    this.epoch = epoch;
    this.step = step;
  }

  void part(RingLink.TransferPart p) {
    if (p.epoch() < epoch) return;
    expect(p.epoch(), p.step());
    partsIn.put(p.index(), p.values());
  }

  void end(RingLink.TransferEnd e) {
    if (e.epoch() < epoch) return;
    expect(e.epoch(), e.step());
    endIn = e;
  }

  /** Whether the whole transfer after {@code step} in ring epoch {@code epoch} is here. */
  boolean complete(long epoch, long step) {
    return epoch == this.epoch && step == this.step && endIn != null && partsIn.size() >= endIn.parts();
  }

  /** Makes {@code replica} and the marks those sent; true when the ring leaves after that step. */
  boolean restore(Replica replica) {
    List<float[]> parts = new ArrayList<>();
    for (int i = 0; i < endIn.parts(); i++) {
      float[] p = partsIn.get(i);
      if (p == null) throw new IllegalStateException("replica part " + i + " of " + endIn.parts() + " missing");
      parts.add(p);
    }
    boolean leaving = restore(replica, parts, endIn);
    partsIn.clear();
    endIn = null;
    return leaving;
  }

  /**
   * Makes {@code replica} and the marks what {@code end} and its {@code parts} hold (a transfer's, or
   * a {@link ReplicaCheckpoint}'s); true when the ring leaves after that step.
   */
  boolean restore(Replica replica, List<float[]> parts, RingLink.TransferEnd end) {
    replica.restore(parts, end.examplesApplied(), end.updates());
    marks.clear();
    for (int i = 0; i < end.markTrainers().size(); i++) {
      long[] m = new long[4];
      System.arraycopy(end.marks(), 4 * i, m, 0, 4);
      marks.put(end.markTrainers().get(i), m);
    }
    return end.leaving();
  }
}
