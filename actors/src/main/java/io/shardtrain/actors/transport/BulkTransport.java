package io.shardtrain.actors.transport;

import akka.Done;
import akka.actor.Address;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.StatusReply;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import io.shardtrain.actors.security.SecuritySettings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * The bulk data plane: moves float payloads (gradients, parameter values) between nodes over plain
 * blocking NIO sockets, next to Artery, which then carries only small control messages. One per
 * ActorSystem ({@link #get}), listening on {@link #address()}, which peers learn from the messages
 * that name it.
 *
 * <p>What travels is a {@link Letter}: a message, serialized by Akka without its floats, and the
 * floats, in one frame ({@link #sendLetter}). The receiving node's reader thread deserializes the
 * message, {@linkplain Letter#open opens} it with the floats and tells the letter's recipient, an
 * actor on that node; a letter whose recipient is no longer alive there
 * {@linkplain Letter#bounce bounces} instead. A request and its reply ({@link #askWithStatus}, the
 * reply a letter back or a plain message) thus take no Artery hop and no shard-region hop, which on
 * a loaded node cost milliseconds. Letters to one peer leave in the order they were sent. An ask
 * whose reply may never come fails with {@link PeerGone}: at once when the connection to its peer
 * fails or closes (a killed JVM's sockets close at once, on its own machine), and when Akka
 * Cluster removes the recipient's node ({@link Departures}; a dead machine's sockets tell nothing).
 *
 * <p>Wire format of one letter: a 16-byte little-endian header (magic {@code "STBL"}, serializer
 * id and message length in one long, length in floats as int), the manifest, the message bytes,
 * then the floats, little-endian, as fp32 or, for a letter whose {@link Letter#precision} says so,
 * as bf16 under its own magic {@code "STBH"} ({@link BulkFrames}). The sockets and threads are
 * {@link BulkConnections}'; its threads are daemons named {@code shardtrain-bulk-<system>-*} and
 * stop when the ActorSystem shuts down.
 */
public final class BulkTransport implements Extension {

  /** The extension id; use {@link BulkTransport#get}. */
  public static final class Id extends ExtensionId<BulkTransport> {
    static final Id INSTANCE = new Id();

    private Id() {}

    @Override
    public BulkTransport createExtension(ActorSystem<?> system) {
      return new BulkTransport(system);
    }
  }

  /** The one BulkTransport of this ActorSystem, started on first use. */
  public static BulkTransport get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /**
   * A message that travels with its floats in one bulk frame. It must be serializable by Akka
   * (without its floats) and is opened on the receiving node, on the connection's reader thread.
   */
  public interface Letter {
    /** Who gets the opened message. */
    ActorRef<?> recipient();

    /** The message to tell the recipient, with the frame's floats attached. */
    Object open(float[] values);

    /**
     * How the frame carries this letter's floats; the receiving node decodes them to fp32 before
     * {@link #open}. fp32 unless the letter says otherwise.
     */
    default WirePrecision precision() {
      return WirePrecision.FP32;
    }

    /**
     * Called on the receiving node instead of delivery when no live actor is behind the recipient
     * (a parameter block that moved, say), so a sender waiting for a reply can hear at once rather
     * than at its timeout. By default nothing: the letter is dropped.
     */
    default void bounce(String reason) {}
  }

  private static final Object IGNORED = new Object();

  private final ActorSystem<?> system;
  private final BulkSettings settings;
  private final Logger log;
  /** Null when the channel is off. */
  private final BulkConnections connections;
  private final Departures departures;
  /** Asks by letter waiting for their replies, by the peer their letter went to. */
  private final Map<InetSocketAddress, Set<CompletableFuture<?>>> inFlight = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  private volatile ActorRef<Object> askHelper;
  private volatile boolean closed;

  private BulkTransport(ActorSystem<?> system) {
    this.system = system;
    this.settings = BulkSettings.fromConfig(system.settings().config());
    this.log = system.log();
    this.departures = Departures.get(system);
    if (!settings.enabled()) {
      connections = null;
      return;
    }
    String host = settings.host().isEmpty()
        ? system.address().getHost().orElse(InetAddress.getLoopbackAddress().getHostAddress())
        : settings.host();
    SecuritySettings security = SecuritySettings.create(system);
    connections = new BulkConnections(host, settings.port(), settings.maxFloats(), threadPrefix(), log, this::open,
        this::closedException, this::peerLost, BulkTls.of(security));
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
        "shardtrain-bulk-close", () -> {
          close();
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    system.getWhenTerminated().thenRun(this::close);
    log.info("Bulk transport listening on {}{}", connections.address(),
        security.enabled() ? " (TLS, mutual authentication)" : "");
  }

  public BulkSettings settings() {
    return settings;
  }

  public boolean isEnabled() {
    return settings.enabled();
  }

  /** Where peers send letters for this node; goes into the messages that name it. */
  public InetSocketAddress address() {
    if (connections == null) throw disabled();
    return connections.address();
  }

  /**
   * Sends {@code letter} with {@code values[offset, offset + length)} to {@code peer}, where it is
   * opened and told to its recipient. Ordered with this node's other letters to that peer. The
   * stage completes once the frame is written, or fails with an IOException naming the peer (e.g.
   * connection refused). The caller must not change that range of {@code values} before the stage
   * completes; an actor whose state may change meanwhile sends a copy. A letter whose recipient is
   * not alive on the peer {@linkplain Letter#bounce bounces} there; one lost with its connection
   * gets no answer at all, so a sender that waits for a reply also needs a timeout.
   *
   * @throws IllegalArgumentException when the range is outside {@code values}, {@code length}
   *     exceeds {@code shardtrain.transport.bulk.max-floats}, or the letter cannot be serialized
   */
  public CompletionStage<Void> sendLetter(InetSocketAddress peer, Letter letter, float[] values, int offset,
      int length) {
    if (letter == null) throw new IllegalArgumentException("letter must not be null");
    checkRange(peer, values, offset, length, "letter to " + letter.recipient());
    Serialization serialization = SerializationExtension.get(system.classicSystem());
    Serializer serializer = serialization.findSerializerFor(letter);
    // Through Serialization, not the serializer itself: that sets the transport information
    // serializers such as Jackson's need to write actor references.
    byte[] bytes = serialization.serialize(letter).get();
    byte[] manifest = Serializers.manifestFor(serializer, letter).getBytes(StandardCharsets.UTF_8);
    if (bytes.length + manifest.length > BulkFrames.MAX_LETTER_BYTES) {
      throw new IllegalArgumentException("letter " + letter.getClass().getSimpleName() + " of " + bytes.length
          + " bytes exceeds " + BulkFrames.MAX_LETTER_BYTES);
    }
    if (connections == null) return CompletableFuture.failedFuture(disabled());
    if (closed) return CompletableFuture.failedFuture(closedException());
    return connections.send(peer, new BulkConnections.Sealed(serializer.identifier(), manifest, bytes), values,
        offset, length, letter.precision());
  }

  private void checkRange(InetSocketAddress peer, float[] values, int offset, int length, String what) {
    if (peer == null) throw new IllegalArgumentException("peer address must not be null");
    if (values == null) throw new IllegalArgumentException("values must not be null");
    if (offset < 0 || length < 0 || offset > values.length - length) {
      throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
          + ") is outside an array of " + values.length + " floats");
    }
    if (length > settings.maxFloats()) {
      throw new IllegalArgumentException(what + " of " + length
          + " floats exceeds shardtrain.transport.bulk.max-floats = " + settings.maxFloats());
    }
  }

  /**
   * Asks with a letter and expects a {@link akka.pattern.StatusReply}: {@code letterFor} builds
   * the letter around the reply address. The stage fails when no reply comes within
   * {@code timeout} (an {@link akka.pattern.AskTimeoutException}), when the reply is an error (a
   * {@link StatusReply.ErrorMessage}), when the frame cannot be written (an IOException), and
   * with {@link PeerGone} when the reply may never come: the connection to {@code peer} failed or
   * closed while it waited, or the cluster removed the recipient's node. It
   * completes on the thread the reply arrives on: attach only quick callbacks, or use the async
   * variants.
   */
  public <R> CompletionStage<R> askWithStatus(InetSocketAddress peer,
      Function<ActorRef<StatusReply<R>>, Letter> letterFor,
      float[] values, int offset, int length, Duration timeout) {
    CompletableFuture<R> reply = new CompletableFuture<>();
    Asks.onArrival(AskPattern.<Object, StatusReply<R>>ask(
        askHelper(), replyTo -> {
          Letter letter = letterFor.apply(replyTo);
          if (!track(peer, letter.recipient().path().address(), reply)) return IGNORED;
          sendLetter(peer, letter, values, offset, length).whenComplete((done, failure) -> {
            // A frame that could not be written fails the ask at once rather than at its timeout.
            if (failure != null) reply.completeExceptionally(failure);
          });
          return IGNORED;
        }, timeout, system.scheduler()))
        .whenComplete((r, failure) -> {
          if (failure != null) {
            reply.completeExceptionally(failure);
          } else if (r.isSuccess()) {
            reply.complete(r.getValue());
          } else {
            reply.completeExceptionally(new StatusReply.ErrorMessage(r.getError().getMessage()));
          }
        });
    return reply;
  }

  /**
   * Keeps {@code reply} until it completes, to fail it when its peer or node is gone; false, with
   * {@code reply} failed, when the cluster removed {@code node} already.
   */
  private boolean track(InetSocketAddress peer, Address node, CompletableFuture<?> reply) {
    Set<CompletableFuture<?>> asks = inFlight.computeIfAbsent(peer, p -> ConcurrentHashMap.newKeySet());
    asks.add(reply);
    reply.whenComplete((r, e) -> asks.remove(reply));
    departures.failIfRemoved(node, reply);
    // After the registration: a removal now either finds it or is seen here.
    if (!departures.removed(node)) return true;
    reply.completeExceptionally(new PeerGone("node " + node + " left the cluster"));
    return false;
  }

  /**
   * The connection to {@code peer} failed or closed: a letter that left on it may be lost with it,
   * and the peer itself may be gone, so every ask waiting on that peer fails.
   */
  private void peerLost(InetSocketAddress peer, String reason) {
    Set<CompletableFuture<?>> asks = inFlight.get(peer);
    if (asks == null || asks.isEmpty()) return;
    log.info("Bulk connection to {} lost ({}): failing {} ask(s) waiting for replies", peer, reason, asks.size());
    for (CompletableFuture<?> f : asks) {
      f.completeExceptionally(new PeerGone("bulk connection to " + peer + " lost: " + reason));
    }
  }

  private ActorRef<Object> askHelper() {
    ActorRef<Object> h = askHelper;
    if (h == null) {
      synchronized (lock) {
        if (askHelper == null) {
          // The ask pattern needs a recipient; the letter goes out while the request is built,
          // so this one only ignores what it is told.
          askHelper = system.systemActorOf(Behaviors.ignore(), "shardtrain-bulk-ask", Props.empty());
        }
        h = askHelper;
      }
    }
    return h;
  }

  /** Deserializes a letter and tells its recipient; a letter that cannot be read is logged and dropped. */
  @SuppressWarnings("unchecked")
  private void open(int serializerId, byte[] manifest, byte[] bytes, float[] values, InetSocketAddress from) {
    String m = new String(manifest, StandardCharsets.UTF_8);
    Object message;
    try {
      message = SerializationExtension.get(system.classicSystem())
          .deserialize(bytes, serializerId, m).get();
    } catch (Exception e) {
      log.error("Dropped a bulk letter '{}' ({} floats) from {}: cannot deserialize it: {}", m, values.length, from,
          e.toString());
      return;
    }
    if (!(message instanceof Letter letter)) {
      log.error("Dropped a bulk frame from {}: '{}' is a {}, not a letter", from, m, message.getClass().getName());
      return;
    }
    akka.actor.ActorRef classic = Adapter.toClassic(letter.recipient());
    // Akka's own classes (the version is pinned): a path that resolved to no live actor.
    if (classic instanceof akka.actor.EmptyLocalActorRef
        || (classic instanceof akka.actor.InternalActorRef internal && internal.isTerminated())) {
      letter.bounce("no actor " + classic.path() + " is alive on " + system.address());
      return;
    }
    ((ActorRef<Object>) letter.recipient()).tell(letter.open(values));
  }

  /** Closes the listener, every connection and thread; later sends fail. Idempotent. */
  void close() {
    synchronized (lock) {
      if (closed) return;
      closed = true;
    }
    if (connections == null) return;
    connections.close();
    log.info("Bulk transport on {} closed", connections.address());
  }

  private IllegalStateException closedException() {
    return new IllegalStateException("bulk transport of ActorSystem " + system.name() + " is closed");
  }

  private static IllegalStateException disabled() {
    return new IllegalStateException("bulk transport is disabled (shardtrain.transport.bulk.enabled = off)");
  }

  /** Thread names start with this, so a leak points at its ActorSystem. */
  String threadPrefix() {
    return "shardtrain-bulk-" + system.name() + "-";
  }
}
