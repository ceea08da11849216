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
 */
final class RingLink {

  /** Another member of the job's ring: its trainer id, actor and node's bulk address (null: channel off). */
  record Hello(String trainerId, ActorRef<Trainer.Command> trainer, BulkAddress bulk)
      implements Trainer.Ring {}

  /** A chunk from the previous member of the ring ({@link RingChunk}). */
  record ChunkArrived(long step, int bucket, int phase, int examples, boolean leaving, float[] values)
      implements Trainer.Ring {
    static ChunkArrived of(RingChunk c) {
      return new ChunkArrived(c.step(), c.bucket(), c.phase(), c.examples(), c.leaving(), c.values());
    }

    RingChunk chunk() {
      return new RingChunk(step, bucket, phase, examples, leaving, values);
    }
  }

  /** A chunk as a bulk letter: its floats travel as the frame's payload. */
  record ChunkLetter(ActorRef<Trainer.Command> recipient, long step, int bucket, int phase, int examples,
      boolean leaving) implements BulkTransport.Letter {
    @Override
    public Object open(float[] values) {
      return new ChunkArrived(step, bucket, phase, examples, leaving, values);
    }
  }

  /** The ring members the receptionist knows of. */
  record Listed(Set<ActorRef<Trainer.Command>> trainers) implements Trainer.Internal {}

  private record Peer(ActorRef<Trainer.Command> trainer, BulkAddress bulk) {}

  private final ActorContext<Trainer.Command> context;
  private final String trainerId;
  private final BulkTransport bulk;
  private final BulkAddress selfBulk;
  private final Map<String, Peer> peers = new HashMap<>();
  private final Set<ActorRef<Trainer.Command>> greeted = new HashSet<>();
  private final List<RingChunk> early = new ArrayList<>();
  private List<String> members = List.of();
  private int position = -1;
  private Peer next;
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

  void hello(Hello m) {
    peers.put(m.trainerId(), new Peer(m.trainer(), m.bulk()));
    // Its listing may reach this node before this trainer's reaches its node.
    greet(m.trainer());
  }

  private void greet(ActorRef<Trainer.Command> t) {
    if (t.equals(context.getSelf()) || !greeted.add(t)) return;
    t.tell(new Hello(trainerId, context.getSelf(), selfBulk));
  }

  /**
   * Forms the ring of {@code memberIds} (the master's members): true once every other member has
   * introduced itself, so chunks can go to the next one.
   */
  boolean form(List<String> memberIds) {
    List<String> sorted = memberIds.stream().sorted().toList();
    int at = sorted.indexOf(trainerId);
    if (at < 0) throw new IllegalStateException("trainer " + trainerId + " is not among the ring's members " + sorted);
    for (String m : sorted) {
      if (!m.equals(trainerId) && !peers.containsKey(m)) return false;
    }
    members = sorted;
    position = at;
    next = sorted.size() == 1 ? null : peers.get(sorted.get((at + 1) % sorted.size()));
    return true;
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
    // Every chunk to another node goes by letter, however small: one channel keeps them in order.
    if (bulk != null && next.bulk() != null && !next.bulk().equals(selfBulk) && v.length <= bulk.settings().maxFloats()) {
      ChunkLetter letter = new ChunkLetter(next.trainer(), c.step(), c.bucket(), c.phase(), c.examples(), c.leaving());
      bulk.sendLetter(next.bulk().socketAddress(), letter, v, 0, v.length).whenComplete((done, failure) -> {
        if (failure != null) {
          context.getSystem().log().warn("trainer {}: ring chunk of step {} to {} not sent: {}", trainerId, c.step(),
              next.bulk(), failure.toString());
        }
      });
    } else {
      next.trainer().tell(ChunkArrived.of(c));
    }
  }

  /** Holds a chunk of a step not begun yet; drops one of a step done. */
  void early(ChunkArrived m, long lastStep) {
    if (m.step() > lastStep) early.add(m.chunk());
  }

  /** Hands the chunks waiting for step {@code step} to {@code take}. */
  void drain(long step, Consumer<RingChunk> take) {
    List<RingChunk> now = new ArrayList<>();
    early.removeIf(c -> c.step() == step && now.add(c));
    for (RingChunk c : now) take.accept(c);
  }
}
