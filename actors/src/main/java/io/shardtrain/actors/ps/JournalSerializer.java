package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import io.shardtrain.actors.ps.BlockEvents.CheckpointTaken;
import io.shardtrain.actors.ps.BlockEvents.GradientApplied;
import io.shardtrain.actors.ps.BlockEvents.GradientReceived;
import io.shardtrain.actors.ps.BlockEvents.GradientSkipped;
import io.shardtrain.actors.ps.BlockEvents.Initialized;
import io.shardtrain.actors.ps.BlockEvents.MembershipUpdated;
import io.shardtrain.actors.ps.BlockEvents.ReplicaPublished;
import io.shardtrain.actors.ps.BlockEvents.RolledBackTo;
import io.shardtrain.actors.ps.BlockEvents.StepApplied;
import io.shardtrain.actors.ps.BlockEvents.StepCommitted;
import io.shardtrain.actors.ps.BlockEvents.Contributor;
import io.shardtrain.actors.ps.BlockState.Contribution;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Binary serializer of what a {@link ParameterBlock} persists: its {@link BlockEvents} and its
 * {@link BlockState} snapshot. Journals and snapshot stores keep this serializer's identifier and
 * each manifest with the bytes, so both never change, and every format a journal may hold is still
 * read. Each type is one {@link #entry} below; all code that knows the state's fields is in
 * {@link #writeState} and {@link #readState}.
 */
public final class JournalSerializer extends TableSerializer {
  /** Stored with every event and snapshot already written, so it never changes. */
  public static final int IDENTIFIER = 717_002;
  /**
   * The format written. Formats 2, 5 and 6 changed wire messages only, so events and snapshots of
   * formats 1 to 8 differ only where {@link #FORMAT_3}, {@link #FORMAT_4}, {@link #FORMAT_7} and
   * {@link #FORMAT_8} say.
   */
  private static final int FORMAT = 8;
  /** Format 8 added the ring epoch to {@link ReplicaPublished} and, as the publication's, to the state. */
  private static final int FORMAT_8 = 8;
  /**
   * Format 7 added {@link StepCommitted}, the task marks of the pending contributions in the state,
   * the examples per update of a spec, the weight of a {@link GradientApplied} and the examples
   * applied of a checkpoint.
   */
  private static final int FORMAT_7 = 7;
  /** Format 4 added task marks to the gradient events and the state. */
  private static final int FORMAT_4 = 4;
  /** Format 3 added the examples a sync block applied, its held checkpoints and its rollback generation to the state. */
  private static final int FORMAT_3 = 3;
  /** The oldest format a journal may hold. */
  private static final int FORMAT_1 = 1;

  public JournalSerializer(ExtendedActorSystem system) {
    super(system, FORMAT_1, FORMAT);
    entry("Initialized", Initialized.class, (out, m) -> {
      putSpec(out, m.spec());
      out.putFloats(m.values());
    }, in -> new Initialized(getSpec(in, in.format() >= FORMAT_7), in.getFloats()));
    // Added in format 7 without changing any layout: older journals hold none.
    entry("Resumed", BlockEvents.Resumed.class, TableSerializer::putResumed, TableSerializer::getResumed);
    entry("GradientReceived", GradientReceived.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
      out.putFloat(m.weight());
      out.putFloats(m.values());
      putMark(out, m.mark());
    }, in -> new GradientReceived(in.getString(), in.getLong(), in.getFloat(), in.getFloats(), getMarkSince4(in)));
    entry("GradientSkipped", GradientSkipped.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
      putMark(out, m.mark());
    }, in -> new GradientSkipped(in.getString(), in.getLong(), getMarkSince4(in)));
    entry("StepApplied", StepApplied.class, (out, m) -> out.putLong(m.step()), in -> new StepApplied(in.getLong()));
    entry("StepCommitted", StepCommitted.class, (out, m) -> {
      out.putLong(m.step());
      out.putByte(m.mean() == null ? (byte) 0 : 1);
      if (m.mean() != null) out.putFloats(m.mean());
      out.putLong(m.examples());
      out.putInt(m.contributors().size());
      for (Contributor c : m.contributors()) {
        out.putString(c.trainerId());
        putMark(out, c.mark());
      }
    }, in -> {
      long step = in.getLong();
      float[] mean = in.getBoolean() ? in.getFloats() : null;
      long examples = in.getLong();
      int n = in.getCount(5);
      List<Contributor> contributors = new ArrayList<>(n);
      for (int i = 0; i < n; i++) contributors.add(new Contributor(in.getString(), getMark(in)));
      return new StepCommitted(step, mean, examples, contributors);
    });
    entry("GradientApplied", GradientApplied.class, (out, m) -> {
      out.putString(m.trainerId());
      out.putLong(m.step());
      out.putFloats(m.values());
      putMark(out, m.mark());
      out.putFloat(m.weight());
    }, in -> {
      String trainer = in.getString();
      long step = in.getLong();
      float[] values = in.getFloats();
      BlockProtocol.TaskMark mark = getMarkSince4(in);
      return new GradientApplied(trainer, step, in.format() >= FORMAT_7 ? in.getFloat() : 0f, values, mark);
    });
    entry("MembershipUpdated", MembershipUpdated.class, (out, m) -> {
      out.putLong(m.epoch());
      out.putStrings(m.trainers());
    }, in -> new MembershipUpdated(in.getLong(), in.getStrings()));
    entry("CheckpointTaken", CheckpointTaken.class, (out, m) -> {
      out.putLong(m.step());
      out.putLong(m.keepFrom());
      putHeld(out, new BlockState.Held(m.values(), m.slots(), m.updates(), m.examples()));
    }, in -> {
      long step = in.getLong();
      long keepFrom = in.getLong();
      BlockState.Held h = getHeld(in);
      return new CheckpointTaken(step, keepFrom, h.values(), h.slots(), h.updates(), h.examples());
    });
    entry("RolledBackTo", RolledBackTo.class, (out, m) -> {
      out.putLong(m.step());
      out.putLong(m.generation());
    }, in -> new RolledBackTo(in.getLong(), in.getLong()));
    entry("ReplicaPublished", ReplicaPublished.class, (out, m) -> {
      out.putLong(m.step());
      out.putLong(m.examples());
      out.putFloats(m.values());
      out.putLong(m.ringEpoch());
    }, in -> {
      long step = in.getLong();
      long examples = in.getLong();
      float[] values = in.getFloats();
      return new ReplicaPublished(step, in.format() >= FORMAT_8 ? in.getLong() : -1, examples, values);
    });
    entry("State", BlockState.class, JournalSerializer::writeState, in -> readState(in, in.format()));
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  /** A gradient event's task mark; formats before 4 had none. */
  private static BlockProtocol.TaskMark getMarkSince4(In in) {
    return in.format() >= FORMAT_4 ? getMark(in) : null;
  }

  private static void putHeld(Out out, BlockState.Held h) {
    out.putFloats(h.values());
    out.putInt(h.slots().length);
    for (float[] slot : h.slots()) out.putFloats(slot);
    out.putLong(h.updates());
    out.putLong(h.examples());
  }

  private static BlockState.Held getHeld(In in) {
    float[] values = in.getFloats();
    float[][] slots = new float[in.getCount(4)][];
    for (int i = 0; i < slots.length; i++) slots[i] = in.getFloats();
    long updates = in.getLong();
    return new BlockState.Held(values, slots, updates, in.format() >= FORMAT_7 ? in.getLong() : 0);
  }

  private static void writeState(Out out, BlockState s) {
    out.putByte(s.spec == null ? (byte) 0 : 1);
    if (s.spec != null) {
      putSpec(out, s.spec);
      out.putFloats(s.values);
      float[][] slots = s.optimizerState.slots();
      out.putInt(slots.length);
      for (float[] slot : slots) out.putFloats(slot);
      out.putLong(s.optimizerState.updates());
    }
    out.putLong(s.version);
    out.putLong(s.membershipEpoch());
    out.putStrings(s.members());
    out.putInt(s.pending().size());
    for (Contribution c : s.pending()) {
      out.putString(c.trainerId());
      out.putFloat(c.weight());
      out.putFloats(c.values());
      putMark(out, c.mark());
    }
    out.putInt(s.lastSteps.size());
    for (Map.Entry<String, Long> e : s.lastSteps.entrySet()) {
      out.putString(e.getKey());
      out.putLong(e.getValue());
    }
    out.putLong(s.examplesApplied);
    out.putInt(s.checkpoints.size());
    for (Map.Entry<Long, BlockState.Held> e : s.checkpoints.entrySet()) {
      out.putLong(e.getKey());
      putHeld(out, e.getValue());
    }
    out.putLong(s.generation);
    Map<Long, BlockProtocol.TaskProgress> marks = s.taskMarks();
    out.putInt(marks.size());
    for (Map.Entry<Long, BlockProtocol.TaskProgress> e : marks.entrySet()) {
      out.putLong(e.getKey());
      out.putLong(e.getValue().offset());
      out.putLong(e.getValue().step());
    }
    out.putLong(s.publishedEpoch);
  }

  private static BlockState readState(In in, int format) {
    BlockSpec spec = null;
    float[] values = null;
    float[][] slots = null;
    long updates = 0;
    if (in.getBoolean()) {
      spec = getSpec(in, format >= FORMAT_7);
      values = in.getFloats();
      slots = new float[in.getCount(4)][];
      for (int i = 0; i < slots.length; i++) slots[i] = in.getFloats();
      updates = in.getLong();
    }
    long version = in.getLong();
    long epoch = in.getLong();
    List<String> members = in.getStrings();
    int n = in.getCount(12);
    List<Contribution> pending = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      pending.add(new Contribution(in.getString(), in.getFloat(), in.getFloats(), format >= FORMAT_7 ? getMark(in) : null));
    }
    int m = in.getCount(12);
    Map<String, Long> lastSteps = new TreeMap<>();
    for (int i = 0; i < m; i++) lastSteps.put(in.getString(), in.getLong());
    // Older snapshots did not count examples (the count restarts at 0) and held no checkpoints.
    if (format < FORMAT_3) {
      return BlockState.restore(spec, values, slots, updates, version, epoch, members, pending, lastSteps, 0);
    }
    long examples = in.getLong();
    BlockState s = BlockState.restore(spec, values, slots, updates, version, epoch, members, pending, lastSteps, examples);
    int k = in.getCount(24);
    TreeMap<Long, BlockState.Held> checkpoints = new TreeMap<>();
    for (int i = 0; i < k; i++) checkpoints.put(in.getLong(), getHeld(in));
    BlockState.restore(s, checkpoints, in.getLong());
    if (format < FORMAT_4) return s;
    int n2 = in.getCount(24);
    Map<Long, BlockProtocol.TaskProgress> marks = new TreeMap<>();
    for (int i = 0; i < n2; i++) marks.put(in.getLong(), new BlockProtocol.TaskProgress(in.getLong(), in.getLong()));
    BlockState.restoreMarks(s, marks);
    return format < FORMAT_8 ? s : BlockState.restorePublishedEpoch(s, in.getLong());
  }
}
