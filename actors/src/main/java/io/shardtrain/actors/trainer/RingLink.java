package io.shardtrain.actors.trainer;

import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.receptionist.Receptionist;
import akka.actor.typed.receptionist.ServiceKey;
import io.shardtrain.actors.allreduce.RingChunk;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A trainer's place in the ring of all-reduce mode: who the other members are, where they are, and
 * how a chunk reaches the next one. Members find each other through the receptionist (one service
 * key per job) and introduce themselves ({@link Hello}) with their node's bulk address; the ring
 * itself is the master's member list, sorted, so every member orders it the same way. A chunk to
 * a member on this node is told (no copy, no serialization); to another node it goes as a bulk
 * letter whose floats are the frame's payload (all of them, so they arrive in the order sent), or,
 * with the bulk channel off, over Artery.
 * Chunks of a step this trainer has not begun yet wait here.
 *
 * <p>A ring is formed from one membership epoch of the master's; every chunk carries it, and chunks
 * of an older epoch (sent before a member died or joined) are dropped. When the membership changes
 * the members re-form the ring and bring each other level ({@link RingStepping}): each says how far
 * it got ({@link Sync}), and one of those that applied the newest step sends its replica to those
 * behind ({@link TransferPart}s, then {@link TransferEnd}).
 */
final class RingLink {

  /** Another member of the job's ring: its trainer id, actor and node's bulk address (null: channel off). */
  record Hello(String trainerId, ActorRef<Trainer.Command> trainer, BulkAddress bulk)
      implements Trainer.Ring {}

  /** A chunk from the previous member of the ring of membership epoch {@code epoch} ({@link RingChunk}). */
  record ChunkArrived(long epoch, long step, int bucket, int phase, int examples, boolean leaving, float[] values,
      long[] marks) implements Trainer.Ring {
    static ChunkArrived of(long epoch, RingChunk c) {
      return new ChunkArrived(epoch, c.step(), c.bucket(), c.phase(), c.examples(), c.leaving(), c.values(),
          c.marks());
    }

    RingChunk chunk() {
      return new RingChunk(step, bucket, phase, examples, leaving, values, marks);
    }
  }

  /** A chunk as a bulk letter: its floats travel as the frame's payload. */
  record ChunkLetter(ActorRef<Trainer.Command> recipient, long epoch, long step, int bucket, int phase, int examples,
      boolean leaving, long[] marks) implements BulkTransport.Letter {
    @Override
    public Object open(float[] values) {
      return new ChunkArrived(epoch, step, bucket, phase, examples, leaving, values, marks);
    }
  }

  /**
   * How far member {@code trainerId} got when it learned of membership epoch {@code epoch}: the last
   * step its replica applied; {@code hasReplica} false: it holds only what it pulled from the blocks.
   */
  record Sync(long epoch, String trainerId, long lastStep, boolean hasReplica) implements Trainer.Ring {}

  /**
   * Member {@code trainerId} leaves after step {@code step} once every other member applied it
   * ({@link RingDepartures}); each answers with an {@link AppliedUpTo}.
   */
  record LeavesAfter(String trainerId, long step) implements Trainer.Ring {}

  /** Member {@code trainerId} applied every step up to {@code step}: the answer to a {@link LeavesAfter}. */
  record AppliedUpTo(String trainerId, long step) implements Trainer.Ring {}

  /** Part {@code index} of a replica after step {@code step}: a parameter's values or one of its optimizer slots. */
  record TransferPart(long epoch, long step, int index, float[] values) implements Trainer.Ring {}

  /** A replica part as a bulk letter. */
  record PartLetter(ActorRef<Trainer.Command> recipient, long epoch, long step, int index)
      implements BulkTransport.Letter {
    @Override
    public Object open(float[] values) {
      return new TransferPart(epoch, step, index, values);
    }
  }

  /**
   * The rest of a replica after step {@code step} ({@code parts} parts): its counters, whether the
   * ring leaves after that step, and the newest task mark of every member that ever had data
   * ({@code markTrainers}[i] has marks[4i..4i+3]: task epoch, task, offset after, step).
   */
  record TransferEnd(long epoch, long step, int parts, long examplesApplied, long updates, boolean leaving,
      List<String> markTrainers, long[] marks) implements Trainer.Ring {}

  /** The ring members the receptionist knows of. */
  record Listed(Set<ActorRef<Trainer.Command>> trainers) implements Trainer.Internal {}

  private record Peer(ActorRef<Trainer.Command> trainer, BulkAddress bulk) {}

  private final ActorContext<Trainer.Command> context;
  private final String trainerId;
  private final BulkTransport bulk;
  private final BulkAddress selfBulk;
  private final Map<String, Peer> peers = new HashMap<>();
  private final Set<ActorRef<Trainer.Command>> greeted = new HashSet<>();
  private final List<ChunkArrived> early = new ArrayList<>();
  private List<String> members = List.of();
  private long epoch = -1;
  private int position = -1;
  /** The next member's id: its peer is looked up for every chunk, so a restarted member's new actor is used. */
  private String next;
  private boolean joined;

  RingLink(ActorContext<Trainer.Command> context, String trainerId) {
    this.context = context;
    this.trainerId = trainerId;
    BulkTransport transport = BulkTransport.get(context.getSystem());
    this.bulk = transport.isEnabled() ? transport : null;
    this.selfBulk = bulk == null ? null : BulkAddress.of(bulk.address());
  }

  /** Makes this trainer known to the other members of job {@code jobId}'s ring, once. */
  void join(String jobId) {
    if (joined) return;
    joined = true;
    ServiceKey<Trainer.Command> key = ServiceKey.create(Trainer.Command.class, "shardtrain-ring-" + jobId);
    ActorRef<Receptionist.Command> receptionist = context.getSystem().receptionist();
    receptionist.tell(Receptionist.register(key, context.getSelf()));
    receptionist.tell(Receptionist.subscribe(key,
        context.messageAdapter(Receptionist.Listing.class, l -> new Listed(l.getServiceInstances(key)))));
  }

  void listed(Listed m) {
    for (ActorRef<Trainer.Command> t : m.trainers()) greet(t);
  }

  /** Takes in a member's introduction; true when it is a new actor for that member (a restart, or the first). */
  boolean hello(Hello m) {
    Peer before = peers.put(m.trainerId(), new Peer(m.trainer(), m.bulk()));
    // Its listing may reach this node before this trainer's reaches its node.
    greet(m.trainer());
    return before == null || !before.trainer().equals(m.trainer());
  }

  private void greet(ActorRef<Trainer.Command> t) {
    if (t.equals(context.getSelf()) || !greeted.add(t)) return;
    t.tell(new Hello(trainerId, context.getSelf(), selfBulk));
  }

  /**
   * Forms the ring of {@code memberIds}, the master's members in membership epoch
   * {@code membershipEpoch}: true once every other member has introduced itself, so chunks can go
   * to the next one.
   */
  boolean form(long membershipEpoch, List<String> memberIds) {
    List<String> sorted = memberIds.stream().sorted().toList();
    int at = sorted.indexOf(trainerId);
    if (at < 0) throw new IllegalStateException("trainer " + trainerId + " is not among the ring's members " + sorted);
    for (String m : sorted) {
      if (!m.equals(trainerId) && !peers.containsKey(m)) return false;
    }
    members = sorted;
    position = at;
    epoch = membershipEpoch;
    next = sorted.size() == 1 ? null : sorted.get((at + 1) % sorted.size());
    early.removeIf(c -> c.epoch() < epoch);
    return true;
  }

  /** The membership epoch of the ring; -1 before the first. */
  long epoch() {
    return epoch;
  }

  List<String> members() {
    return members;
  }

  /** Tells every other member of the ring {@code m}. */
  void tellOthers(Trainer.Ring m) {
    for (String member : members) {
      if (!member.equals(trainerId)) peers.get(member).trainer().tell(m);
    }
  }

  /** Tells member {@code trainerId} (known by its {@link Hello}) {@code m}. */
  void tell(String member, Trainer.Ring m) {
    Peer peer = peers.get(member);
    if (peer != null) peer.trainer().tell(m);
  }

  /**
   * Sends member {@code to} this replica's {@code parts} (which nothing changes afterwards), by bulk
   * letters where it is on another node, then {@code end}.
   */
  void transfer(String to, long step, List<float[]> parts, TransferEnd end) {
    Peer peer = peers.get(to);
    for (int i = 0; i < parts.size(); i++) {
      float[] v = parts.get(i);
      if (remote(peer, v)) {
        int index = i;
        bulk.sendLetter(peer.bulk().socketAddress(), new PartLetter(peer.trainer(), epoch, step, i), v, 0, v.length)
            .whenComplete((done, failure) -> {
              if (failure != null) {
                context.getSystem().log().warn("trainer {}: replica part {} to {} not sent: {}", trainerId, index, to,
                    failure.toString());
              }
            });
      } else {
        peer.trainer().tell(new TransferPart(epoch, step, i, v));
      }
    }
    peer.trainer().tell(end);
  }

  private boolean remote(Peer peer, float[] v) {
    return bulk != null && peer.bulk() != null && !peer.bulk().equals(selfBulk) && v.length <= bulk.settings().maxFloats();
  }

  boolean formed() {
    return position >= 0;
  }

  int size() {
    return members.size();
  }

  int position() {
    return position;
  }

  /** Sends {@code c} to the next member; its values are never changed afterwards, so they go uncopied. */
  void send(RingChunk c) {
    float[] v = c.values();
    Peer next = peers.get(this.next);
    // Every chunk to another node goes by letter, however small: one channel keeps them in order.
    if (remote(next, v)) {
      ChunkLetter letter = new ChunkLetter(next.trainer(), epoch, c.step(), c.bucket(), c.phase(), c.examples(),
          c.leaving(), c.marks());
      bulk.sendLetter(next.bulk().socketAddress(), letter, v, 0, v.length).whenComplete((done, failure) -> {
        if (failure != null) {
          context.getSystem().log().warn("trainer {}: ring chunk of step {} to {} not sent: {}", trainerId, c.step(),
              next.bulk(), failure.toString());
        }
      });
    } else {
      next.trainer().tell(ChunkArrived.of(epoch, c));
    }
  }

  /**
   * Holds a chunk of a step not begun yet, or of a ring not formed yet; drops one of a step done or
   * of an older ring.
   */
  void early(ChunkArrived m, long lastStep) {
    if (m.epoch() > epoch || (m.epoch() == epoch && m.step() > lastStep)) early.add(m);
  }

  /** Hands the chunks of this ring waiting for step {@code step} to {@code take}. */
  void drain(long step, Consumer<RingChunk> take) {
    List<ChunkArrived> now = new ArrayList<>();
    early.removeIf(c -> c.epoch() == epoch && c.step() == step && now.add(c));
    for (ChunkArrived c : now) take.accept(c.chunk());
  }
}
