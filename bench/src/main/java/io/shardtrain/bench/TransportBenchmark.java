package io.shardtrain.bench;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.pattern.StatusReply;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.actors.transport.BulkFrames;
import io.shardtrain.actors.transport.BulkTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Measures, in one run on loopback, how fast a parameter moves as a "push + pull" round: the
 * trainer side sends the parameter's floats block by block and the server side answers each block
 * with the same number of floats (a pushed gradient, then pulled values). Three paths: (a) a raw
 * blocking socket pair with the bulk framing, (b) Artery between two ActorSystems in this JVM,
 * floats inside the messages, (c) {@link BulkTransport} between the same two systems: each block
 * goes as a letter to the server actor, which echoes it in a letter back to the asking trainer,
 * one bulk frame each way and no Artery message, as a parameter block's pushes and pulls travel.
 * Figures are bytes moved both ways per second, median over the measured rounds after as many
 * warm-up rounds.
 */
public final class TransportBenchmark {
  /** The largest block these benchmarks send in one message: the Artery frame limit they set is 8 MiB. */
  public static final int MAX_BLOCK_FLOATS = 1 << 20;

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private TransportBenchmark() {}

  /** Benchmark messages; serialized by {@link BenchSerializer}. */
  public interface BenchMessage {}

  /** What the server actor handles. */
  sealed interface ServerMessage {}

  /** A block carried inside an Artery message; the reply carries the same number of floats. */
  public record ArteryBlock(int seq, float[] values, int offset, int length, ActorRef<ArteryBlock> replyTo)
      implements BenchMessage, ServerMessage {}

  /**
   * A block sent by letter to the server actor {@code server}; its echo goes by letter to
   * {@code replyHost:replyPort}, the trainer's bulk address.
   */
  public record BlockLetter(ActorRef<ServerMessage> server, int seq, String replyHost, int replyPort,
      ActorRef<StatusReply<float[]>> replyTo) implements BenchMessage, BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return server;
    }

    @Override
    public Object open(float[] values) {
      return new LetterBlock(this, values);
    }
  }

  /** A {@link BlockLetter} opened on the server, with its floats. */
  private record LetterBlock(BlockLetter letter, float[] values) implements ServerMessage {}

  /** The server's echo of a {@link BlockLetter}: the same floats, back to the asking trainer. */
  public record EchoLetter(ActorRef<StatusReply<float[]>> replyTo) implements BenchMessage, BulkTransport.Letter {
    @Override
    public ActorRef<?> recipient() {
      return replyTo;
    }

    @Override
    public Object open(float[] values) {
      return StatusReply.success(values);
    }
  }

  /** GB/s (10^9 bytes moved both ways per second, median of the measured rounds) for each path. */
  public record Result(
      int floats,
      int blockFloats,
      int inFlight,
      int rounds,
      double rawGBps,
      double arteryGBps,
      double bulkGBps,
      double arteryToRaw,
      double bulkToRaw) {

    public String summary() {
      return String.format(Locale.ROOT,
          "push+pull of %d floats in blocks of %d, %d in flight, median of %d rounds: "
              + "raw socket %.2f GB/s, Artery %.2f GB/s (%.2f x raw), bulk channel %.2f GB/s (%.2f x raw)",
          floats, blockFloats, inFlight, rounds, rawGBps, arteryGBps, arteryToRaw, bulkGBps, bulkToRaw);
    }
  }

  /** {@link #run(int, int, int, int)} with blocks of up to 256K floats, 4 in flight. */
  public static Result run(int floats, int rounds) {
    return run(floats, rounds, Math.min(floats, 262_144), 4);
  }

  /**
   * Runs all three paths; {@code rounds} warm-up rounds, then {@code rounds} measured ones per path.
   *
   * @throws IllegalArgumentException on non-positive sizes or a block larger than 1M floats (the
   *     Artery frame limit used here is 8 MiB)
   */
  public static Result run(int floats, int rounds, int blockFloats, int inFlight) {
    if (floats < 1) throw new IllegalArgumentException("floats must be at least 1, got " + floats);
    if (rounds < 1) throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
    if (blockFloats < 1 || blockFloats > MAX_BLOCK_FLOATS) {
      throw new IllegalArgumentException("blockFloats must be in 1.." + MAX_BLOCK_FLOATS + ", got " + blockFloats);
    }
    if (inFlight < 1) throw new IllegalArgumentException("inFlight must be at least 1, got " + inFlight);
    float[] param = new float[floats];
    for (int i = 0; i < floats; i++) param[i] = i * 0.001f;
    int[][] blocks = blocks(floats, blockFloats);
    try {
      ActorSystem<ServerMessage> server = ActorSystem.create(serverBehavior(), "bench-server", akkaConfig());
      ActorSystem<Void> trainer = ActorSystem.create(Behaviors.empty(), "bench-trainer", akkaConfig());
      long[][] nanos;
      try (Path raw = rawPath(param, blocks)) {
        // Started up front so a bad setting fails here rather than as a timed-out round.
        BulkTransport bulkTrainer = BulkTransport.get(trainer);
        InetSocketAddress serverAddress = BulkTransport.get(server).address();
        ActorRef<ServerMessage> remoteServer = ActorRefResolver.get(trainer)
            .resolveActorRef(ActorRefResolver.get(server).toSerializationFormat(server));
        Round artery = () -> arteryRound(trainer, remoteServer, param, blocks, inFlight);
        Round bulk = () -> bulkRound(bulkTrainer, serverAddress, remoteServer, param, blocks, inFlight);
        nanos = measure(rounds, raw, artery, bulk);
      } finally {
        trainer.terminate();
        trainer.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        server.terminate();
        server.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      double raw = gbps(floats, nanos[0]);
      double artery = gbps(floats, nanos[1]);
      double bulk = gbps(floats, nanos[2]);
      return new Result(floats, blockFloats, inFlight, rounds, raw, artery, bulk, artery / raw, bulk / raw);
    } catch (Exception e) {
      throw new IllegalStateException("transport benchmark failed: " + e, e);
    }
  }

  /** Runs the benchmark from the command line: {@code [floats] [rounds] [blockFloats] [inFlight]}. */
  public static void main(String[] args) {
    Asks.poolAsyncCallbacks(); // as the launcher does, before anything else
    int floats = args.length > 0 ? Integer.parseInt(args[0]) : 1_048_576;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int block = args.length > 2 ? Integer.parseInt(args[2]) : Math.min(floats, 262_144);
    int inFlight = args.length > 3 ? Integer.parseInt(args[3]) : 4;
    System.out.println(run(floats, rounds, block, inFlight).summary());
  }

  interface Round {
    void run() throws Exception;
  }

  /** A path: the rounds to time, and how to release its resources. */
  interface Path extends Round, AutoCloseable {
    @Override
    void close() throws Exception;
  }

  /**
   * Warm-up, then the timed rounds; the paths take turns round by round, so a burst of load from
   * elsewhere on the machine hits all of them alike.
   */
  static long[][] measure(int rounds, Round... paths) throws Exception {
    return measure(rounds, rounds, paths);
  }

  /** {@code warmup} rounds of every path, then {@code rounds} measured ones, the paths interleaved. */
  static long[][] measure(int warmup, int rounds, Round... paths) throws Exception {
    for (int i = 0; i < warmup; i++) {
      for (Round p : paths) p.run();
    }
    long[][] nanos = new long[paths.length][rounds];
    for (int i = 0; i < rounds; i++) {
      for (int p = 0; p < paths.length; p++) {
        long t0 = System.nanoTime();
        paths[p].run();
        nanos[p][i] = System.nanoTime() - t0;
      }
    }
    return nanos;
  }

  static double gbps(int floats, long[] nanos) {
    double median = Median.of(nanos);
    double bytes = 2.0 * floats * Float.BYTES;
    return bytes / Math.max(median, 1.0);
  }

  static int[][] blocks(int floats, int blockFloats) {
    int n = (floats + blockFloats - 1) / blockFloats;
    int[][] blocks = new int[n][];
    for (int b = 0; b < n; b++) {
      int off = b * blockFloats;
      blocks[b] = new int[] {off, Math.min(blockFloats, floats - off)};
    }
    return blocks;
  }

  // (a) Raw socket pair: the trainer thread writes every block, a reader thread counts the echoes.

  static Path rawPath(float[] param, int[][] blocks) throws IOException {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
    SocketChannel client = SocketChannel.open(listener.getLocalAddress());
    SocketChannel served = listener.accept();
    listener.close();
    for (SocketChannel ch : List.of(client, served)) {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
      ch.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread echo = daemon("shardtrain-bench-raw-echo", () -> {
      ByteBuffer in = BulkFrames.newBuffer();
      ByteBuffer out = BulkFrames.newBuffer();
      try {
        for (BulkFrames.Header h; (h = BulkFrames.readHeader(served, in)) != null; ) {
          float[] values = new float[h.length()];
          BulkFrames.readPayload(served, in, values);
          BulkFrames.write(served, out, h.id(), values, 0, values.length);
        }
      } catch (IOException e) {
        failure.compareAndSet(null, e);
      }
    });
    Semaphore roundDone = new Semaphore(0);
    Thread reader = daemon("shardtrain-bench-raw-reader", () -> {
      ByteBuffer in = BulkFrames.newBuffer();
      try {
        int seen = 0;
        for (BulkFrames.Header h; (h = BulkFrames.readHeader(client, in)) != null; ) {
          BulkFrames.readPayload(client, in, new float[h.length()]);
          if (++seen == blocks.length) {
            seen = 0;
            roundDone.release();
          }
        }
      } catch (IOException e) {
        failure.compareAndSet(null, e);
      }
      roundDone.release(); // wake a waiting round; it then sees the failure or the closed socket
    });
    echo.start();
    reader.start();
    ByteBuffer out = BulkFrames.newBuffer();
    return new Path() {
      @Override
      public void run() throws Exception {
        for (int b = 0; b < blocks.length; b++) {
          BulkFrames.write(client, out, b, param, blocks[b][0], blocks[b][1]);
        }
        if (!roundDone.tryAcquire(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new TimeoutException("raw socket round did not finish within " + TIMEOUT);
        }
        if (failure.get() != null) throw new IOException("raw socket path failed", failure.get());
      }

      @Override
      public void close() throws Exception {
        client.close();
        served.close();
        echo.join(2000);
        reader.join(2000);
      }
    };
  }

  // (b) and (c): the server side, one actor that echoes Artery blocks and bulk letters.

  private static Behavior<ServerMessage> serverBehavior() {
    return Behaviors.setup(ctx -> {
      BulkTransport bulk = BulkTransport.get(ctx.getSystem());
      return Behaviors.receive(ServerMessage.class)
          .onMessage(ArteryBlock.class, m -> {
            m.replyTo().tell(new ArteryBlock(m.seq(), m.values(), m.offset(), m.length(), null));
            return Behaviors.same();
          })
          .onMessage(LetterBlock.class, m -> {
            BlockLetter l = m.letter();
            // A lost echo fails the trainer's ask at its timeout, which fails the round.
            bulk.sendLetter(new InetSocketAddress(l.replyHost(), l.replyPort()), new EchoLetter(l.replyTo()),
                m.values(), 0, m.values().length);
            return Behaviors.same();
          })
          .build();
    });
  }

  private static void arteryRound(ActorSystem<Void> trainer, ActorRef<ServerMessage> server, float[] param,
      int[][] blocks, int inFlight) throws Exception {
    Semaphore window = new Semaphore(inFlight);
    List<CompletableFuture<ArteryBlock>> replies = new ArrayList<>(blocks.length);
    for (int b = 0; b < blocks.length; b++) {
      window.acquire();
      int seq = b;
      CompletionStage<ArteryBlock> reply = AskPattern.ask(server,
          (ActorRef<ArteryBlock> replyTo) -> new ArteryBlock(seq, param, blocks[seq][0], blocks[seq][1], replyTo),
          TIMEOUT, trainer.scheduler());
      replies.add(reply.whenComplete((r, e) -> window.release()).toCompletableFuture());
    }
    awaitAll(replies, blocks);
  }

  private static void bulkRound(BulkTransport bulk, InetSocketAddress serverAddress, ActorRef<ServerMessage> server,
      float[] param, int[][] blocks, int inFlight) throws Exception {
    Semaphore window = new Semaphore(inFlight);
    InetSocketAddress self = bulk.address();
    List<CompletableFuture<float[]>> replies = new ArrayList<>(blocks.length);
    for (int b = 0; b < blocks.length; b++) {
      window.acquire();
      int seq = b;
      CompletionStage<float[]> echoed = bulk.askWithStatus(serverAddress,
          replyTo -> new BlockLetter(server, seq, self.getHostString(), self.getPort(), replyTo),
          param, blocks[b][0], blocks[b][1], TIMEOUT);
      replies.add(echoed.whenComplete((r, e) -> window.release()).toCompletableFuture());
    }
    awaitAll(replies, blocks);
  }

  private static void awaitAll(List<? extends CompletableFuture<?>> replies, int[][] blocks) throws Exception {
    try {
      CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a block of the round failed: " + e.getCause(), e.getCause());
    }
    for (int b = 0; b < blocks.length; b++) {
      Object r = replies.get(b).get();
      int got = r instanceof ArteryBlock a ? a.length() : ((float[]) r).length;
      if (got != blocks[b][1]) {
        throw new IllegalStateException("block " + b + " came back with " + got + " floats, sent " + blocks[b][1]);
      }
    }
  }

  private static Config akkaConfig() {
    return ConfigFactory.parseString("""
        akka.loglevel = WARNING
        akka.actor.provider = remote
        akka.remote.warn-about-direct-use = off
        akka.remote.warn-unsafe-watch-outside-cluster = off
        akka.remote.artery.transport = tcp
        akka.remote.artery.canonical.hostname = "127.0.0.1"
        akka.remote.artery.canonical.port = 0
        akka.remote.artery.advanced.maximum-frame-size = 8MiB
        akka.remote.artery.advanced.buffer-pool-size = 128
        akka.remote.artery.advanced.maximum-large-frame-size = 8MiB
        akka.io.tcp.direct-buffer-size = 2MiB
        akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        akka.actor.serializers.shardtrain-bench = "io.shardtrain.bench.BenchSerializer"
        akka.actor.serialization-bindings {
          "io.shardtrain.bench.TransportBenchmark$BenchMessage" = shardtrain-bench
        }
        shardtrain.transport.bulk.host = "127.0.0.1"
        shardtrain.transport.bulk.port = 0
        """).withFallback(ConfigFactory.load());
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }
}
