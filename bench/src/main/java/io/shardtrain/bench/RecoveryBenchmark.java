package io.shardtrain.bench;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockProtocol.BlockStats;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.persistence.journal.Journal;
import io.shardtrain.persistence.journal.JournalConfig;
import io.shardtrain.persistence.journal.JournalSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How long a {@code ps} node's blocks take to come back on another node: a parameter of
 * {@code floats} floats (Adam, so values and two slots) is trained for {@code 2 * snapshotEvery - 2}
 * async updates on one ActorSystem, which then stops without a goodbye to its blocks; a new
 * ActorSystem on the same journal recovers every block (newest snapshot plus the events behind it,
 * {@code snapshotEvery - 1} of them when no snapshot was skipped) and the time from the first pull
 * to the last block's answer is the recovery time. Failure detection and downing come before this
 * on a real cluster and are set by configuration (see docs/OPERATIONS.md), not measured here.
 */
public final class RecoveryBenchmark {
  private static final Duration TIMEOUT = Duration.ofMinutes(10);

  private RecoveryBenchmark() {}

  /** One measurement; {@code journal} is the journal's kind (h2, postgres). */
  public record Result(int floats, int blocks, int snapshotEvery, int updates, long eventsReplayed,
      double recoverySeconds, double updateSeconds, String journal) {

    public String summary() {
      return String.format(Locale.ROOT,
          "recovery of %d floats in %d block(s), snapshot every %d updates, %d updates: %.3f s "
              + "(%d events replayed in all blocks; %s journal; the updates took %.1f s)",
          floats, blocks, snapshotEvery, updates, recoverySeconds, eventsReplayed, journal, updateSeconds);
    }
  }

  /**
   * @param journal a journal layer ({@link JournalConfig#forUrl} or {@code shardtrain.persistence.*}
   *     settings); each run uses new persistence ids, so runs on one database do not meet
   */
  public static Result run(int floats, int blockFloats, int snapshotEvery, Config journal) {
    if (floats < 1) throw new IllegalArgumentException("floats must be at least 1, got " + floats);
    if (blockFloats < 1) throw new IllegalArgumentException("block floats must be at least 1, got " + blockFloats);
    if (snapshotEvery < 1) {
      throw new IllegalArgumentException("snapshot-every must be at least 1, got " + snapshotEvery);
    }
    String parameter = "recovery" + Long.toString(System.nanoTime(), 36) + ".w";
    List<BlockSlice> slices = BlockLayout.of(List.of(new ParamShape(parameter, floats)), blockFloats);
    // Events are the Initialized one plus one per update: 2 * snapshotEvery - 1 events leave the
    // newest snapshot at snapshotEvery and snapshotEvery - 1 events behind it, the most a block replays.
    int updates = Math.max(1, 2 * snapshotEvery - 2);
    float[] grad = new float[blockFloats];
    for (int i = 0; i < grad.length; i++) grad[i] = (float) Math.cos(i * 0.01) * 1e-2f;

    ActorSystem<Void> first = node(journal, snapshotEvery);
    String kind;
    double updateSeconds;
    try {
      List<EntityRef<Command>> blocks = refs(first, slices);
      OptimizerSpec adam = OptimizerSpec.defaults(OptimizerSpec.Kind.ADAM);
      List<CompletableFuture<Long>> init = new ArrayList<>();
      for (int b = 0; b < slices.size(); b++) {
        BlockSpec spec = BlockSpec.of(slices.get(b), adam, "constant", 1e-3f, BlockSpec.Mode.ASYNC, -1);
        float[] values = new float[spec.length()];
        init.add(blocks.get(b).<Long>askWithStatus(r -> new BlockProtocol.Initialize(spec, values, r), TIMEOUT)
            .toCompletableFuture());
      }
      all(init);
      long t0 = System.nanoTime();
      for (int u = 1; u <= updates; u++) {
        long step = u;
        List<CompletableFuture<BlockProtocol.PushAck>> acks = new ArrayList<>();
        for (int b = 0; b < slices.size(); b++) {
          float[] g = java.util.Arrays.copyOf(grad, slices.get(b).length());
          acks.add(blocks.get(b).<BlockProtocol.PushAck>askWithStatus(
              r -> new BlockProtocol.PushGradient("bench", step, step - 1, 0, 1f, g, r), TIMEOUT)
              .toCompletableFuture());
        }
        all(acks);
      }
      updateSeconds = (System.nanoTime() - t0) / 1e9;
      kind = JournalSettings.create(first).kind().name().toLowerCase(Locale.ROOT);
    } finally {
      stop(first);
    }

    ActorSystem<Void> second = node(journal, snapshotEvery);
    try {
      List<EntityRef<Command>> blocks = refs(second, slices);
      long t0 = System.nanoTime();
      List<CompletableFuture<BlockValues>> pulls = new ArrayList<>();
      for (EntityRef<Command> b : blocks) {
        pulls.add(b.<BlockValues>askWithStatus(r -> new BlockProtocol.Pull(updates, r), TIMEOUT).toCompletableFuture());
      }
      all(pulls);
      double seconds = (System.nanoTime() - t0) / 1e9;
      long replayed = 0;
      for (int b = 0; b < blocks.size(); b++) {
        BlockValues v = pulls.get(b).join();
        if (v.version() != updates) {
          throw new IllegalStateException("block " + slices.get(b).entityId() + " recovered at version " + v.version()
              + ", expected " + updates);
        }
        replayed += blocks.get(b).<BlockStats>ask(BlockProtocol.GetStats::new, TIMEOUT)
            .toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).eventsReplayed();
      }
      return new Result(floats, slices.size(), snapshotEvery, updates, replayed, seconds, updateSeconds, kind);
    } catch (Exception e) {
      throw new IllegalStateException("recovery benchmark failed: " + e, e);
    } finally {
      stop(second);
    }
  }

  private static ActorSystem<Void> node(Config journal, int snapshotEvery) {
    Config base = ConfigFactory.parseMap(Map.of(
            "shardtrain.ps.snapshot-every", snapshotEvery,
            "akka.loglevel", "WARNING",
            "akka.cluster.roles", List.of(ParameterBlock.ROLE),
            "akka.remote.artery.canonical.hostname", "127.0.0.1",
            "akka.remote.artery.canonical.port", 0,
            "akka.coordinated-shutdown.run-by-jvm-shutdown-hook", "off"))
        .withFallback(journal)
        .withFallback(ConfigFactory.parseResources("cluster.conf"))
        .withFallback(ConfigFactory.load());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "recovery-bench", JournalConfig.of(base));
    try {
      Cluster cluster = Cluster.get(system);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
      Journal.start(system);
      ParameterBlock.init(system);
      return system;
    } catch (RuntimeException e) {
      stop(system);
      throw e;
    }
  }

  private static List<EntityRef<Command>> refs(ActorSystem<?> system, List<BlockSlice> slices) {
    List<EntityRef<Command>> refs = new ArrayList<>();
    for (BlockSlice s : slices) refs.add(ParameterBlock.entityRef(system, s.entityId()));
    return refs;
  }

  private static void all(List<? extends CompletableFuture<?>> futures) {
    try {
      CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("recovery benchmark: a block did not answer: " + e, e);
    }
  }

  private static void stop(ActorSystem<?> system) {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("recovery benchmark: ActorSystem did not stop: " + e, e);
    }
  }
}
