package io.shardtrain.bench;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.MemberStatus;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockLetters;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.persistence.journal.JournalConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Parameter-server bandwidth: push + pull rounds of one parameter through real
 * {@link ParameterBlock}s (async mode, SGD, Akka's in-memory journal and a local snapshot store in
 * a temporary directory) on a {@code ps} node, from a client node of the same cluster over
 * loopback, with the payloads on the bulk channel and inline in the Artery messages, next to a
 * raw socket moving the same bytes in the same run. A round pushes a gradient to every block and
 * pulls every block's values at the version that gradient makes, all blocks at once. Figures are
 * GB/s: bytes pushed plus bytes pulled over the median round time, after the warm-up rounds.
 *
 * <p>The in-memory journal keeps every event object (here a 1 MB gradient) until a snapshot
 * deletes it, where a real journal keeps serialized bytes in its database; so the blocks snapshot
 * every {@value #SNAPSHOT_EVERY} updates, which bounds what the benchmark holds in memory to a few
 * dozen gradients per block instead of a few hundred that the garbage collector would copy and
 * measure.
 */
public final class PsBandwidthBenchmark {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String TRAINER = "bench";
  private static final float[] NO_FLOATS = new float[0];
  static final int SNAPSHOT_EVERY = 10;

  private PsBandwidthBenchmark() {}

  /** GB/s (10^9 bytes pushed plus pulled per second, median round) for each path. */
  public record Result(
      int floats,
      int blockFloats,
      int blocks,
      int warmup,
      int rounds,
      double rawGBps,
      double inlineGBps,
      double bulkGBps) {

    public double bulkToInline() {
      return bulkGBps / inlineGBps;
    }

    public String summary() {
      return String.format(Locale.ROOT,
          "ps push+pull of %d floats in %d block(s) of %d, median of %d rounds after %d warm-up rounds: raw socket %.2f GB/s, "
              + "parameter blocks over Artery %.2f GB/s, over the bulk channel %.2f GB/s (%.2f x Artery, %.2f x raw)",
          floats, blocks, blockFloats, rounds, warmup, rawGBps, inlineGBps, bulkGBps, bulkToInline(), bulkGBps / rawGBps);
    }
  }

  /** {@link #run(int, int, int, int)} with as many warm-up rounds as measured ones. */
  public static Result run(int floats, int blockFloats, int rounds) {
    return run(floats, blockFloats, rounds, rounds);
  }

  /**
   * Runs the three paths on a parameter of {@code floats} floats cut into blocks of at most
   * {@code blockFloats}; {@code warmup} rounds of each (on two cores the JIT compilers need a few
   * hundred before the block paths run compiled), then {@code rounds} measured ones per path.
   */
  public static Result run(int floats, int blockFloats, int rounds, int warmup) {
    if (floats < 1) throw new IllegalArgumentException("floats must be at least 1, got " + floats);
    if (rounds < 1) throw new IllegalArgumentException("rounds must be at least 1, got " + rounds);
    if (warmup < 0) throw new IllegalArgumentException("warmup must be at least 0, got " + warmup);
    if (blockFloats < 1 || blockFloats > TransportBenchmark.MAX_BLOCK_FLOATS) {
      throw new IllegalArgumentException("blockFloats must be in 1.." + TransportBenchmark.MAX_BLOCK_FLOATS + ", got "
          + blockFloats);
    }
    float[] grad = new float[floats];
    for (int i = 0; i < floats; i++) grad[i] = (float) Math.sin(i * 0.001) * 1e-3f;
    List<BlockSlice> slices = BlockLayout.of(List.of(new ParamShape("bench.w", floats)), blockFloats);
    try {
      ActorSystem<Void> ps = ActorSystem.create(Behaviors.empty(), "ps-bench", config("ps"));
      ActorSystem<Void> client = ActorSystem.create(Behaviors.empty(), "ps-bench", config("client"));
      try (TransportBenchmark.Path raw = TransportBenchmark.rawPath(grad, TransportBenchmark.blocks(floats,
          blockFloats))) {
        List<EntityRef<Command>> blocks = start(ps, client, slices);
        BulkTransport bulk = BulkTransport.get(client);
        BulkAddress self = BulkAddress.of(bulk.address());
        // A bulk pull of each block tells the client where its node takes payloads, and the block's actor.
        List<BlockValues> heads = new ArrayList<>();
        for (EntityRef<Command> b : blocks) heads.add(pull(b, 0, self).join());
        long[] step = {0};
        TransportBenchmark.Round inline = () -> round(blocks, slices, grad, ++step[0], null, null, null);
        TransportBenchmark.Round viaBulk = () -> round(blocks, slices, grad, ++step[0], bulk, self, heads);
        // Raw and bulk rounds interleave, so both see the same machine; the Artery path runs on its
        // own afterwards, since its large messages leave the collector and Artery's threads work
        // that would otherwise land in the rounds measured next to it.
        long[][] nanos = TransportBenchmark.measure(warmup, rounds, raw, viaBulk);
        long[][] artery = TransportBenchmark.measure(warmup, rounds, inline);
        return new Result(floats, blockFloats, slices.size(), warmup, rounds, TransportBenchmark.gbps(floats, nanos[0]),
            TransportBenchmark.gbps(floats, artery[0]), TransportBenchmark.gbps(floats, nanos[1]));
      } finally {
        client.terminate();
        client.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        ps.terminate();
        ps.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      throw new IllegalStateException("ps bandwidth benchmark failed: " + e, e);
    }
  }

  /**
   * From the command line: {@code [floats] [rounds]}; runs the parameter as blocks of 256K floats
   * and as one block.
   */
  public static void main(String[] args) {
    Asks.poolAsyncCallbacks(); // as the launcher does, before anything else
    int floats = args.length > 0 ? Integer.parseInt(args[0]) : 1_048_576;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    System.out.println(run(floats, Math.min(floats, 262_144), rounds).summary());
    if (floats > 262_144 && floats <= 1 << 20) System.out.println(run(floats, floats, rounds).summary());
  }

  private static List<EntityRef<Command>> start(ActorSystem<?> ps, ActorSystem<?> client, List<BlockSlice> slices)
      throws Exception {
    Cluster cps = Cluster.get(ps);
    cps.manager().tell(Join.create(cps.selfMember().address()));
    Cluster.get(client).manager().tell(Join.create(cps.selfMember().address()));
    ParameterBlock.init(ps);
    ParameterBlock.init(client);
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (Cluster.get(ps).state().members().count(m -> m.status() == MemberStatus.up()) < 2) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("benchmark cluster did not form");
      Thread.sleep(20);
    }
    OptimizerSpec sgd = OptimizerSpec.defaults(OptimizerSpec.Kind.SGD);
    List<EntityRef<Command>> blocks = new ArrayList<>();
    for (BlockSlice s : slices) {
      BlockSpec spec = BlockSpec.of(s, sgd, "constant", 1e-3f, BlockSpec.Mode.ASYNC, -1);
      EntityRef<Command> ref = ParameterBlock.entityRef(client, s.entityId());
      ref.<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, new float[s.length()], r), TIMEOUT)
          .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      blocks.add(ref);
    }
    return blocks;
  }

  /**
   * Pushes a gradient to every block and pulls each at the version that push makes, all blocks at
   * once. As a trainer does: the pull goes out with the push, not after its ack, and the block
   * answers it as soon as the gradient is applied. With {@code bulk} (else inline, through
   * sharding), as a trainer does once it knows the blocks' actors: each push and pull is a letter
   * to the block's actor, and the acknowledgement and values come back as letters.
   */
  private static void round(List<EntityRef<Command>> blocks, List<BlockSlice> slices, float[] grad, long step,
      BulkTransport bulk, BulkAddress self, List<BlockValues> heads) throws Exception {
    List<CompletableFuture<PushAck>> pushed = new ArrayList<>();
    List<CompletableFuture<BlockValues>> pulled = new ArrayList<>();
    for (int b = 0; b < blocks.size(); b++) {
      BlockSlice s = slices.get(b);
      EntityRef<Command> block = blocks.get(b);
      if (bulk == null) {
        float[] slice = new float[s.length()];
        System.arraycopy(grad, s.offset(), slice, 0, s.length());
        pushed.add(block.<PushAck>askWithStatus(
            r -> new BlockProtocol.PushGradient(TRAINER, step, 0, 0, 1f, slice, r), TIMEOUT).toCompletableFuture());
      } else {
        BlockValues head = heads.get(b);
        pushed.add(bulk.<PushAck>askWithStatus(head.node().socketAddress(),
            r -> new BlockLetters.PushLetter(head.block(), self,
                new BlockProtocol.PushGradient(TRAINER, step, 0, 0, 1f, null, 0, null, r)),
            grad, s.offset(), s.length(), TIMEOUT).toCompletableFuture());
      }
      if (bulk == null) {
        pulled.add(pull(block, step, null));
      } else {
        BlockValues head = heads.get(b);
        pulled.add(bulk.<BlockValues>askWithStatus(head.node().socketAddress(),
            r -> new BlockLetters.PullLetter(head.block(), new BlockProtocol.Pull(step, self, r)),
            NO_FLOATS, 0, 0, TIMEOUT).toCompletableFuture());
      }
    }
    List<CompletableFuture<?>> all = new ArrayList<>(pushed);
    all.addAll(pulled);
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    for (int b = 0; b < blocks.size(); b++) {
      PushAck ack = pushed.get(b).join();
      if (!(ack instanceof BlockProtocol.Applied)) {
        throw new IllegalStateException("block " + slices.get(b).entityId() + " did not apply step " + step + ": " + ack);
      }
      BlockValues v = pulled.get(b).join();
      if (v.version() < step || v.values().length != slices.get(b).length()) {
        throw new IllegalStateException("block " + b + " pulled version " + v.version() + " with "
            + v.values().length + " floats, expected version " + step + " with " + slices.get(b).length());
      }
    }
  }

  /** A pull; with {@code self}, its values come over the bulk channel and the reply names the block's actor. */
  private static CompletableFuture<BlockValues> pull(EntityRef<Command> block, long minVersion, BulkAddress self) {
    CompletableFuture<BlockValues> v = block.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(minVersion, self, r),
        TIMEOUT).toCompletableFuture();
    if (self == null) return v;
    return v.thenApply(values -> {
      if (values.block() == null || values.node() == null) {
        throw new IllegalStateException("block answered a bulk pull without its actor and node: " + values);
      }
      return values;
    });
  }

  private static Config config(String role) {
    String roles = role.equals("ps") ? "[ps]" : "[]";
    return JournalConfig.of(ConfigFactory.parseString(String.format(Locale.ROOT, """
        akka.loglevel = WARNING
        akka.actor.provider = cluster
        akka.cluster.roles = %s
        akka.cluster.jmx.multi-mbeans-in-same-jvm = on
        akka.remote.artery.canonical.hostname = "127.0.0.1"
        akka.remote.artery.canonical.port = 0
        akka.remote.artery.advanced.maximum-frame-size = 8MiB
        akka.remote.artery.advanced.buffer-pool-size = 128
        akka.remote.artery.advanced.maximum-large-frame-size = 8MiB
        akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        shardtrain.persistence.journal = memory
        shardtrain.transport.bulk.host = "127.0.0.1"
        shardtrain.transport.bulk.port = 0
        shardtrain.ps.snapshot-every = %d
        """, roles, SNAPSHOT_EVERY)));
  }
}
