package io.shardtrain.actors.transport;

import akka.Done;
import akka.actor.Cancellable;
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
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * The bulk data plane: moves float payloads (gradients, parameter values) between nodes over plain
 * blocking NIO sockets, next to Artery, which carries only the small control messages. One per
 * ActorSystem ({@link #get}). A sender calls {@link #send} to the peer's {@link #address()} with a
 * fresh {@link #newTransferId()} and then tells the receiving actor (over Artery) the address, id
 * and length; the receiver calls {@link #receive} and pipes the stage to itself. The payload may
 * arrive before or after {@code receive} is called: arrived payloads wait, bounded in total size,
 * for {@code claim-timeout}.
 *
 * <p>Wire format of one transfer: a 16-byte little-endian header (magic {@code "STBF"}, transfer
 * id as long, length in floats as int) followed by the floats, little-endian. One outbound
 * connection per peer, created on first use, written by its own thread so frames never interleave;
 * one reader thread per inbound connection. All threads are daemons named
 * {@code shardtrain-bulk-<system>-*}
 * and stop when the ActorSystem shuts down.
 *
 * <p>A {@link Letter} carries a message and its floats in one frame ({@link #sendLetter}): the
 * receiving node's reader thread deserializes the message (Akka serialization), attaches the
 * floats and tells the letter's recipient. A request and its reply then take no Artery hop, no
 * shard-region hop and no separate payload claim, which on a loaded node costs milliseconds.
 */
public final class BulkTransport implements Extension {
  private static final int SOCKET_BUFFER_BYTES = 4 << 20;
  private static final int CONNECT_TIMEOUT_MS = 10_000;

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
     * Called on the receiving node instead of delivery when no live actor is behind the recipient
     * (a parameter block that moved, say), so a sender waiting for a reply can hear at once rather
     * than at its timeout. By default nothing: the letter is dropped.
     */
    default void bounce(String reason) {}
  }

  private sealed interface Slot {}

  private record Waiting(CompletableFuture<float[]> future, Cancellable[] timer) implements Slot {}

  private record Arrived(float[] values, long arrivedNanos) implements Slot {}

  private final ActorSystem<?> system;
  private final BulkSettings settings;
  private final Logger log;
  private final ServerSocketChannel server;
  private final InetSocketAddress address;
  private final Thread acceptor;
  private final Set<Inbound> inbound = ConcurrentHashMap.newKeySet();
  private final Map<InetSocketAddress, Outbound> outbound = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  private final Map<Long, Slot> slots = new HashMap<>();
  private long unclaimedFloats;
  private final long idPrefix = ((long) ThreadLocalRandom.current().nextInt()) << 32;
  private final AtomicLong idCounter = new AtomicLong();
  private final Cancellable sweeper;
  private volatile ActorRef<Object> askHelper;
  private volatile boolean closed;

  private BulkTransport(ActorSystem<?> system) {
    this.system = system;
    this.settings = BulkSettings.fromConfig(system.settings().config());
    this.log = system.log();
    if (!settings.enabled()) {
      server = null;
      address = null;
      acceptor = null;
      sweeper = null;
      return;
    }
    String host = settings.host().isEmpty()
        ? system.address().getHost().orElse(InetAddress.getLoopbackAddress().getHostAddress())
        : settings.host();
    try {
      server = ServerSocketChannel.open();
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
      server.bind(new InetSocketAddress(host, settings.port()));
    } catch (IOException e) {
      throw new IllegalStateException("bulk transport cannot listen on " + host + ":" + settings.port()
          + " (shardtrain.transport.bulk.host/port): " + e.getMessage(), e);
    }
    int port = ((InetSocketAddress) localAddress(server)).getPort();
    address = new InetSocketAddress(host, port);
    acceptor = daemon(threadPrefix() + "accept-" + port, this::acceptLoop);
    acceptor.start();
    Duration every = settings.claimTimeout().dividedBy(4);
    if (every.toMillis() < 50) every = Duration.ofMillis(50);
    sweeper = system.scheduler().scheduleAtFixedRate(every, every, this::expireUnclaimed, system.executionContext());
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
        "shardtrain-bulk-close", () -> {
          close();
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    system.getWhenTerminated().thenRun(this::close);
    log.info("Bulk transport listening on {}", address);
  }

  public BulkSettings settings() {
    return settings;
  }

  public boolean isEnabled() {
    return settings.enabled();
  }

  /** Where peers send payloads for this node; goes into the control messages. */
  public InetSocketAddress address() {
    if (address == null) throw disabled();
    return address;
  }

  /** A transfer id unique on this node (random high 32 bits per node, counter below). */
  public long newTransferId() {
    return idPrefix | (idCounter.incrementAndGet() & 0xFFFF_FFFFL);
  }

  /**
   * Sends {@code values[offset, offset + length)} as transfer {@code transferId} to {@code peer}.
   * The stage completes once the frame is written to the socket, or fails with an IOException
   * naming the peer (e.g. connection refused). The caller must not change that range of
   * {@code values} before the stage completes; an actor whose state may change meanwhile sends a
   * copy. Sends to one peer are written in call order.
   *
   * @throws IllegalArgumentException when the range is outside {@code values} or {@code length}
   *     exceeds {@code shardtrain.transport.bulk.max-floats}
   */
  public CompletionStage<Void> send(InetSocketAddress peer, long transferId, float[] values, int offset, int length) {
    checkRange(peer, values, offset, length, "transfer " + transferId);
    if (!settings.enabled()) return CompletableFuture.failedFuture(disabled());
    if (closed) return CompletableFuture.failedFuture(closedException());
    Outbound out = outbound.computeIfAbsent(peer, Outbound::new);
    return out.enqueue(new SendTask(transferId, values, offset, length, null, new CompletableFuture<>()));
  }

  /**
   * Sends {@code letter} with {@code values[offset, offset + length)} to {@code peer}, where it is
   * opened and told to its recipient. Ordered with this node's other sends to that peer. The stage
   * completes once the frame is written, or fails naming the peer. A letter whose recipient is
   * not alive on the peer {@linkplain Letter#bounce bounces} there; one lost with its connection
   * gets no answer at all, so a sender that waits for a reply also needs a timeout.
   *
   * @throws IllegalArgumentException as {@link #send}, or when the letter cannot be serialized
   */
  public CompletionStage<Void> sendLetter(InetSocketAddress peer, Letter letter, float[] values, int offset,
      int length) {
    if (letter == null) throw new IllegalArgumentException("letter must not be null");
    checkRange(peer, values, offset, length, "letter to " + letter.recipient());
    Serialization serialization = SerializationExtension.get(system.classicSystem());
    Serializer serializer = serialization.findSerializerFor(letter);
    byte[] bytes = serializer.toBinary(letter);
    byte[] manifest = Serializers.manifestFor(serializer, letter).getBytes(StandardCharsets.UTF_8);
    if (bytes.length + manifest.length > BulkFrames.MAX_LETTER_BYTES) {
      throw new IllegalArgumentException("letter " + letter.getClass().getSimpleName() + " of " + bytes.length
          + " bytes exceeds " + BulkFrames.MAX_LETTER_BYTES);
    }
    if (!settings.enabled()) return CompletableFuture.failedFuture(disabled());
    if (closed) return CompletableFuture.failedFuture(closedException());
    Outbound out = outbound.computeIfAbsent(peer, Outbound::new);
    return out.enqueue(new SendTask(0, values, offset, length,
        new Sealed(serializer.identifier(), manifest, bytes), new CompletableFuture<>()));
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
   * {@code timeout}, when the reply is an error, or when the frame cannot be written.
   */
  public <R> CompletionStage<R> askWithStatus(InetSocketAddress peer,
      Function<ActorRef<StatusReply<R>>, Letter> letterFor,
      float[] values, int offset, int length, Duration timeout) {
    CompletableFuture<R> reply = new CompletableFuture<>();
    AskPattern.<Object, StatusReply<R>>ask(
        askHelper(), replyTo -> {
          sendLetter(peer, letterFor.apply(replyTo), values, offset, length).whenComplete((done, failure) -> {
            // A frame that could not be written fails the ask at once rather than at its timeout.
            if (failure != null) reply.completeExceptionally(failure);
          });
          return IGNORED;
        }, timeout, system.scheduler())
        // Akka's stage runs even its non-async callbacks on the common pool, which on two cores is
        // a new thread per callback; this one is quick and runs where the reply arrives.
        .whenCompleteAsync((r, failure) -> {
          if (failure != null) {
            reply.completeExceptionally(failure);
          } else if (r.isSuccess()) {
            reply.complete(r.getValue());
          } else {
            reply.completeExceptionally(new StatusReply.ErrorMessage(r.getError().getMessage()));
          }
        }, Runnable::run);
    return reply;
  }

  private static final Object IGNORED = new Object();

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

  /**
   * The payload of transfer {@code transferId}, whether it arrived already or arrives within
   * {@code timeout}; otherwise the stage fails with a {@link TimeoutException} naming the id. Each id
   * can be claimed once. The stage completes on the connection's reader thread (or the caller's,
   * when the payload is already there): attach only quick callbacks, such as {@code pipeToSelf}, or
   * use the async variants, since a slow callback stalls that connection.
   */
  public CompletionStage<float[]> receive(long transferId, Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("receive timeout must be positive, got " + timeout);
    }
    if (!settings.enabled()) return CompletableFuture.failedFuture(disabled());
    if (closed) return CompletableFuture.failedFuture(closedException());
    CompletableFuture<float[]> future = new CompletableFuture<>();
    float[] ready = null;
    synchronized (lock) {
      Slot slot = slots.get(transferId);
      if (slot instanceof Arrived a) {
        slots.remove(transferId);
        unclaimedFloats -= a.values().length;
        ready = a.values();
      } else if (slot instanceof Waiting) {
        return CompletableFuture.failedFuture(
            new IllegalStateException("bulk transfer " + transferId + " is already being received"));
      } else {
        Waiting w = new Waiting(future, new Cancellable[1]);
        slots.put(transferId, w);
        w.timer()[0] = system.scheduler().scheduleOnce(timeout, () -> timeOut(transferId, w, timeout),
            system.executionContext());
      }
    }
    if (ready != null) future.complete(ready);
    return future;
  }

  /** Arrived payloads nobody has claimed yet (diagnostics). */
  public int unclaimedTransfers() {
    synchronized (lock) {
      return (int) slots.values().stream().filter(s -> s instanceof Arrived).count();
    }
  }

  private void timeOut(long transferId, Waiting w, Duration timeout) {
    synchronized (lock) {
      if (slots.get(transferId) != w) return;
      slots.remove(transferId);
    }
    w.future().completeExceptionally(new TimeoutException("bulk transfer " + transferId
        + " did not arrive at " + address + " within " + timeout.toMillis() + " ms"));
  }

  private void deliver(long transferId, float[] values, InetSocketAddress from) {
    Waiting waiting = null;
    String dropped = null;
    synchronized (lock) {
      Slot slot = slots.get(transferId);
      if (slot instanceof Waiting w) {
        slots.remove(transferId);
        waiting = w;
      } else if (slot instanceof Arrived) {
        dropped = "a payload with this id is already waiting to be claimed";
      } else if (unclaimedFloats + values.length > settings.maxUnclaimedFloats()) {
        dropped = "unclaimed payloads would exceed shardtrain.transport.bulk.max-unclaimed-floats = "
            + settings.maxUnclaimedFloats();
      } else {
        slots.put(transferId, new Arrived(values, System.nanoTime()));
        unclaimedFloats += values.length;
      }
    }
    if (waiting != null) {
      if (waiting.timer()[0] != null) waiting.timer()[0].cancel();
      waiting.future().complete(values);
    } else if (dropped != null) {
      log.warn("Dropped bulk transfer {} ({} floats) from {}: {}", transferId, values.length, from, dropped);
    }
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

  private void expireUnclaimed() {
    long limit = settings.claimTimeout().toNanos();
    long now = System.nanoTime();
    int expired = 0;
    synchronized (lock) {
      Iterator<Map.Entry<Long, Slot>> it = slots.entrySet().iterator();
      while (it.hasNext()) {
        if (it.next().getValue() instanceof Arrived a && now - a.arrivedNanos() > limit) {
          it.remove();
          unclaimedFloats -= a.values().length;
          expired++;
        }
      }
    }
    if (expired > 0) {
      log.warn("Discarded {} bulk payload(s) not claimed within {}", expired, settings.claimTimeout());
    }
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (IOException e) {
        if (!closed) log.error("Bulk transport stopped accepting on {}: {}", address, e.toString());
        return;
      }
      try {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
        Inbound in = new Inbound(ch);
        inbound.add(in);
        if (closed) {
          in.close();
        } else {
          in.thread.start();
        }
      } catch (IOException e) {
        log.warn("Bulk transport could not set up an inbound connection: {}", e.toString());
        closeQuietly(ch);
      }
    }
  }

  /** One accepted connection and its reader thread. */
  private final class Inbound {
    final SocketChannel channel;
    final InetSocketAddress remote;
    final Thread thread;

    Inbound(SocketChannel channel) throws IOException {
      this.channel = channel;
      this.remote = (InetSocketAddress) channel.getRemoteAddress();
      this.thread = daemon(threadPrefix() + "read-" + remote.getPort(), this::run);
    }

    void run() {
      ByteBuffer buf = BulkFrames.newBuffer();
      try {
        while (!closed) {
          BulkFrames.Header h = BulkFrames.readHeader(channel, buf);
          if (h == null) break;
          if (h.magic() != BulkFrames.MAGIC && h.magic() != BulkFrames.LETTER_MAGIC) {
            log.error("Malformed bulk frame from {} (magic 0x{}): closing the connection", remote,
                Integer.toHexString(h.magic()));
            break;
          }
          if (h.length() < 0 || h.length() > settings.maxFloats()) {
            log.error("Bulk transfer {} from {} declares {} floats, outside 0..{} "
                + "(shardtrain.transport.bulk.max-floats): closing the connection",
                h.transferId(), remote, h.length(), settings.maxFloats());
            break;
          }
          if (h.magic() == BulkFrames.LETTER_MAGIC) {
            byte[][] letter = BulkFrames.readLetter(channel, buf, (int) h.transferId());
            float[] values = new float[h.length()];
            BulkFrames.readPayload(channel, buf, values);
            open((int) (h.transferId() >>> 32), letter[0], letter[1], values, remote);
            continue;
          }
          float[] values = new float[h.length()];
          BulkFrames.readPayload(channel, buf, values);
          deliver(h.transferId(), values, remote);
        }
      } catch (EOFException e) {
        if (!closed) log.warn("Bulk connection from {} closed in the middle of a frame", remote);
      } catch (IOException e) {
        if (!closed) log.warn("Bulk connection from {} failed: {}", remote, e.toString());
      } finally {
        close();
      }
    }

    void close() {
      closeQuietly(channel);
      inbound.remove(this);
    }
  }

  /** A serialized letter: its serializer, manifest and bytes. */
  private record Sealed(int serializerId, byte[] manifest, byte[] bytes) {}

  /** One frame to write: a payload (letter null) or a letter with its floats. */
  private record SendTask(long transferId, float[] values, int offset, int length, Sealed letter,
      CompletableFuture<Void> result) {}

  /** The connection to one peer, connected lazily and written only by its own thread. */
  private final class Outbound {
    final InetSocketAddress peer;
    final LinkedBlockingQueue<SendTask> queue = new LinkedBlockingQueue<>();
    final Thread thread;
    private volatile SocketChannel channel;

    Outbound(InetSocketAddress peer) {
      this.peer = peer;
      this.thread = daemon(threadPrefix() + "write-" + peer.getHostString() + ":" + peer.getPort(), this::run);
      thread.start();
    }

    CompletionStage<Void> enqueue(SendTask task) {
      queue.add(task);
      if (closed && queue.remove(task)) task.result().completeExceptionally(closedException());
      return task.result();
    }

    void run() {
      ByteBuffer buf = BulkFrames.newBuffer();
      try {
        while (!closed) {
          SendTask task = queue.take();
          try {
            write(task, buf);
            task.result().complete(null);
          } catch (IOException e) {
            closeQuietly(channel);
            channel = null;
            String reason = closed ? "bulk transport closed" : e.getMessage();
            task.result().completeExceptionally(new IOException("bulk send of transfer " + task.transferId()
                + " to " + peer + " failed: " + reason, e));
          }
        }
      } catch (InterruptedException e) {
        // close() interrupts the writer.
      } finally {
        closeQuietly(channel);
        for (SendTask t; (t = queue.poll()) != null; ) t.result().completeExceptionally(closedException());
      }
    }

    private void write(SendTask task, ByteBuffer buf) throws IOException {
      SocketChannel ch = channel;
      if (ch == null) {
        ch = SocketChannel.open();
        try {
          ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
          ch.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
          ch.socket().connect(peer, CONNECT_TIMEOUT_MS);
        } catch (IOException e) {
          closeQuietly(ch);
          throw new ConnectException("cannot connect to bulk peer " + peer + ": " + e.getMessage());
        }
        channel = ch;
        if (closed) throw new ClosedChannelException();
      }
      Sealed l = task.letter();
      if (l == null) {
        BulkFrames.write(ch, buf, task.transferId(), task.values(), task.offset(), task.length());
      } else {
        BulkFrames.writeLetter(ch, buf, l.serializerId(), l.manifest(), l.bytes(), task.values(), task.offset(),
            task.length());
      }
    }

    void close() {
      thread.interrupt();
      closeQuietly(channel);
    }
  }

  /** Closes the listener, every connection and thread; pending receives fail. Idempotent. */
  void close() {
    List<Waiting> waiting = new ArrayList<>();
    synchronized (lock) {
      if (closed) return;
      closed = true;
      for (Slot s : slots.values()) {
        if (s instanceof Waiting w) waiting.add(w);
      }
      slots.clear();
      unclaimedFloats = 0;
    }
    if (!settings.enabled()) return;
    sweeper.cancel();
    closeQuietly(server);
    for (Outbound o : outbound.values()) o.close();
    for (Inbound i : inbound) i.close();
    for (Waiting w : waiting) {
      if (w.timer()[0] != null) w.timer()[0].cancel();
      w.future().completeExceptionally(closedException());
    }
    join(acceptor);
    for (Outbound o : outbound.values()) join(o.thread);
    for (Inbound i : List.copyOf(inbound)) join(i.thread);
    log.info("Bulk transport on {} closed", address);
  }

  private static void join(Thread t) {
    if (t == Thread.currentThread()) return;
    try {
      t.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  private static java.net.SocketAddress localAddress(ServerSocketChannel ch) {
    try {
      return ch.getLocalAddress();
    } catch (IOException e) {
      throw new IllegalStateException("bulk transport listener has no local address", e);
    }
  }

  private static void closeQuietly(java.io.Closeable c) {
    if (c == null) return;
    try {
      c.close();
    } catch (IOException ignored) {
      // Closing on shutdown or after an error: nothing more to do.
    }
  }
}
