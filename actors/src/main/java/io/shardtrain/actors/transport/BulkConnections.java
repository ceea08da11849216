package io.shardtrain.actors.transport;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The sockets and threads behind {@link BulkTransport}: a listener with its accept thread, one
 * reader thread per inbound connection, and one outbound connection per peer, connected on first
 * use and written only by its own thread, so frames to a peer never interleave and leave in the
 * order they were queued. Every frame is a letter ({@link BulkFrames#writeLetter}); a reader hands
 * each one, read whole, to the {@link Receiver}. An outbound connection also has a thread that
 * only reads it, to hear at once when the peer closes it or its JVM dies (the peer never writes on
 * it), and tells the {@link PeerLost}. With {@link BulkTls} every connection runs over TLS, and an
 * inbound one whose peer does not authenticate is closed in the handshake, before a letter is read.
 * Threads are daemons named {@code <prefix>accept-*},
 * {@code <prefix>read-*}, {@code <prefix>write-*} and {@code <prefix>watch-*}.
 */
final class BulkConnections {
  private static final int SOCKET_BUFFER_BYTES = 4 << 20;
  private static final int CONNECT_TIMEOUT_MS = 10_000;

  /** Takes the letters read off inbound connections, on the connection's reader thread. */
  interface Receiver {
    void letter(int serializerId, byte[] manifest, byte[] message, float[] values, InetSocketAddress from);
  }

  /** Hears that the outbound connection to a peer failed or closed: letters sent on it may be lost. */
  interface PeerLost {
    void lost(InetSocketAddress peer, String reason);
  }

  /** A serialized letter: its serializer, manifest and bytes. */
  record Sealed(int serializerId, byte[] manifest, byte[] bytes) {}

  /** One letter frame to write, and the stage its sender waits on. */
  private record SendTask(Sealed letter, float[] values, int offset, int length, WirePrecision precision,
      CompletableFuture<Void> result) {}

  private final ServerSocketChannel server;
  private final InetSocketAddress address;
  private final int maxFloats;
  private final String threadPrefix;
  private final Logger log;
  private final Receiver receiver;
  private final Supplier<RuntimeException> closedException;
  private final PeerLost peerLost;
  /** Null: plain TCP. */
  private final BulkTls tls;
  private final Thread acceptor;
  private final Set<Inbound> inbound = ConcurrentHashMap.newKeySet();
  private final Map<InetSocketAddress, Outbound> outbound = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Listens on {@code host:port} (0: an ephemeral port) and starts accepting; {@code tls} null: plain TCP. */
  BulkConnections(String host, int port, int maxFloats, String threadPrefix, Logger log, Receiver receiver,
      Supplier<RuntimeException> closedException, PeerLost peerLost, BulkTls tls) {
    this.tls = tls;
    this.maxFloats = maxFloats;
    this.threadPrefix = threadPrefix;
    this.log = log;
    this.receiver = receiver;
    this.closedException = closedException;
    this.peerLost = peerLost;
    try {
      server = ServerSocketChannel.open();
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
      server.bind(new InetSocketAddress(host, port));
      address = new InetSocketAddress(host, ((InetSocketAddress) server.getLocalAddress()).getPort());
    } catch (IOException e) {
      throw new IllegalStateException("bulk transport cannot listen on " + host + ":" + port
          + " (shardtrain.transport.bulk.host/port): " + e.getMessage(), e);
    }
    acceptor = daemon(threadPrefix + "accept-" + address.getPort(), this::acceptLoop);
    acceptor.start();
  }

  InetSocketAddress address() {
    return address;
  }

  /** Queues {@code letter} with {@code values[offset, offset + length)} in {@code precision} for {@code peer}. */
  CompletionStage<Void> send(InetSocketAddress peer, Sealed letter, float[] values, int offset, int length,
      WirePrecision precision) {
    if (closed) return CompletableFuture.failedFuture(closedException.get());
    return outbound.computeIfAbsent(peer, Outbound::new)
        .enqueue(new SendTask(letter, values, offset, length, precision, new CompletableFuture<>()));
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
      this.thread = daemon(threadPrefix + "read-" + remote.getPort(), this::run);
    }

    void run() {
      ByteChannel link;
      try {
        link = tls == null ? channel : tls.accept(channel);
      } catch (IOException e) {
        if (!closed) log.warn("Bulk connection from {} refused before any letter: {}", remote, e.getMessage());
        close();
        return;
      }
      ByteBuffer buf = BulkFrames.newBuffer();
      try {
        while (!closed) {
          BulkFrames.Header h = BulkFrames.readHeader(link, buf);
          if (h == null) break;
          // A frame that cannot be read cannot be skipped either: the stream has lost its place.
          WirePrecision precision = BulkFrames.letterPrecision(h.magic());
          if (precision == null) {
            log.error("Bulk frame from {} is not a letter (magic 0x{}): closing the connection", remote,
                Integer.toHexString(h.magic()));
            break;
          }
          if (h.length() < 0 || h.length() > maxFloats) {
            log.error("Bulk letter from {} declares {} floats, outside 0..{} "
                + "(shardtrain.transport.bulk.max-floats): closing the connection", remote, h.length(), maxFloats);
            break;
          }
          byte[][] letter = BulkFrames.readLetter(link, buf, (int) h.id());
          float[] values = BulkFrames.readPayload(link, buf, h.length(), precision);
          receiver.letter((int) (h.id() >>> 32), letter[0], letter[1], values, remote);
        }
      } catch (EOFException e) {
        if (!closed) log.warn("Bulk connection from {} closed in the middle of a frame", remote);
      } catch (IOException e) {
        if (!closed) log.warn("Bulk connection from {} failed: {}", remote, e.toString());
      } finally {
        closeQuietly(link);
        close();
      }
    }

    void close() {
      closeQuietly(channel);
      inbound.remove(this);
    }
  }

  /** The connection to one peer, connected lazily and written only by its own thread. */
  private final class Outbound {
    final InetSocketAddress peer;
    final LinkedBlockingQueue<SendTask> queue = new LinkedBlockingQueue<>();
    final Thread thread;
    /** The socket channel, or TLS over it. */
    private volatile ByteChannel channel;
    /** Reads {@link #channel} only to hear it close; null before the first connection. */
    private volatile Thread watcher;

    Outbound(InetSocketAddress peer) {
      this.peer = peer;
      this.thread = daemon(threadPrefix + "write-" + peer.getHostString() + ":" + peer.getPort(), this::run);
      thread.start();
    }

    CompletionStage<Void> enqueue(SendTask task) {
      queue.add(task);
      if (closed && queue.remove(task)) task.result().completeExceptionally(closedException.get());
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
            String reason = closed ? "bulk transport closed" : e.getMessage();
            task.result().completeExceptionally(new IOException("bulk send of " + task.length() + " floats to "
                + peer + " failed: " + reason, e));
            dropped(channel, "send failed: " + reason);
          }
        }
      } catch (InterruptedException e) {
        // close() interrupts the writer.
      } finally {
        closeQuietly(channel);
        for (SendTask t; (t = queue.poll()) != null; ) t.result().completeExceptionally(closedException.get());
      }
    }

    private void write(SendTask task, ByteBuffer buf) throws IOException {
      ByteChannel ch = channel;
      // Closed by the watcher: the peer went away since the last letter.
      if (ch == null || !ch.isOpen()) {
        SocketChannel raw = SocketChannel.open();
        try {
          raw.setOption(StandardSocketOptions.TCP_NODELAY, true);
          raw.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
          raw.socket().connect(peer, CONNECT_TIMEOUT_MS);
          ch = tls == null ? raw : tls.connect(raw, peer);
        } catch (IOException e) {
          closeQuietly(raw);
          throw new ConnectException("cannot connect to bulk peer " + peer + ": " + e.getMessage());
        }
        channel = ch;
        if (closed) throw new ClosedChannelException();
        watch(ch);
      }
      Sealed l = task.letter();
      BulkFrames.writeLetter(ch, buf, l.serializerId(), l.manifest(), l.bytes(), task.values(), task.offset(),
          task.length(), task.precision());
    }

    /** Reads {@code ch} until it ends: nothing comes on it but its end (EOF or a reset). */
    private void watch(ByteChannel ch) {
      Thread t = daemon(threadPrefix + "watch-" + peer.getHostString() + ":" + peer.getPort(), () -> {
        ByteBuffer sink = ByteBuffer.allocate(64);
        String reason = "closed by the peer";
        try {
          while (ch.read(sink.clear()) >= 0) {
            // Nothing is expected; whatever comes is dropped.
          }
        } catch (IOException e) {
          reason = e.toString();
        }
        dropped(ch, reason);
      });
      watcher = t;
      t.start();
    }

    /**
     * The connection {@code ch} (null: one that never came up) failed or closed: the next letter
     * connects again, and the transport hears of it unless it is closing (the writer and the
     * watcher may both tell it of one connection).
     */
    private void dropped(ByteChannel ch, String reason) {
      synchronized (this) {
        // Dropped already, by the writer or the watcher, or a newer connection stands.
        if (ch != null && channel != ch) return;
        channel = null;
      }
      closeQuietly(ch);
      if (!closed) peerLost.lost(peer, reason);
    }

    void close() {
      thread.interrupt();
      closeQuietly(channel);
    }
  }

  /** Closes the listener and every connection, and waits briefly for their threads. Idempotent. */
  void close() {
    synchronized (this) {
      if (closed) return;
      closed = true;
    }
    closeQuietly(server);
    for (Outbound o : outbound.values()) o.close();
    for (Inbound i : inbound) i.close();
    join(acceptor);
    for (Outbound o : outbound.values()) {
      join(o.thread);
      if (o.watcher != null) join(o.watcher);
    }
    for (Inbound i : List.copyOf(inbound)) join(i.thread);
  }

  private static void join(Thread t) {
    if (t == Thread.currentThread()) return;
    try {
      t.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
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
