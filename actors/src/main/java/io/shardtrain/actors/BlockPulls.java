package io.shardtrain.actors;

import akka.actor.typed.ActorSystem;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One block's values for a program on this node ({@link ShardTrain#pull}): over the bulk channel
 * where it is on, inline otherwise or when that fails; a pull the block cannot answer in time fails
 * naming the version the block is at.
 */
final class BlockPulls {
  private final ActorSystem<?> system;
  private final Duration timeout;

  BlockPulls(ActorSystem<?> system, Duration timeout) {
    this.system = system;
    this.timeout = timeout;
  }

  /**
   * The values of block {@code entityId} at version >= {@code minVersion}. With this node's bulk
   * channel on they come over it (a {@link io.shardtrain.actors.ps.BlockLetters.ValuesLetter}) where the block's node can
   * send them, and inline again if that fails.
   */
  CompletionStage<BlockProtocol.BlockValues> pull(String entityId, long minVersion) {
    long start = System.nanoTime();
    var block = ParameterBlock.entityRef(system, entityId);
    BulkTransport bulk = BulkTransport.get(system);
    if (!bulk.isEnabled()) {
      return Asks.onArrival(block.<BlockProtocol.BlockValues>askWithStatus(
              replyTo -> new BlockProtocol.Pull(minVersion, replyTo), timeout))
          .exceptionallyCompose(failure -> unreached(entityId, minVersion, start, failure));
    }
    BulkAddress self = BulkAddress.of(bulk.address());
    return Asks.onArrival(block.<BlockProtocol.BlockValues>askWithStatus(
            replyTo -> new BlockProtocol.Pull(minVersion, self, replyTo), timeout))
        .handle((v, failure) -> failure == null ? CompletableFuture.completedFuture(v)
            : inlineUnlessUnreached(entityId, minVersion, start, failure))
        .thenCompose(stage -> stage);
  }

  /**
   * After a pull over the bulk channel failed: the same pull inline, unless it timed out because the
   * block has not reached the version, which another wait of the ask's timeout would not change.
   */
  private CompletionStage<BlockProtocol.BlockValues> inlineUnlessUnreached(String entityId, long minVersion,
      long start, Throwable failure) {
    Throwable cause = Asks.cause(failure);
    CompletionStage<BlockProtocol.BlockStats> stats = cause instanceof java.util.concurrent.TimeoutException
        ? stats(entityId) : CompletableFuture.completedFuture(null);
    return stats.thenCompose(s -> s != null && s.version() < minVersion
        ? unreachedAt(entityId, minVersion, start, cause, s)
        : Asks.onArrival(ParameterBlock.entityRef(system, entityId).<BlockProtocol.BlockValues>askWithStatus(
                replyTo -> new BlockProtocol.Pull(minVersion, replyTo), timeout))
            .exceptionallyCompose(again -> unreached(entityId, minVersion, start, again)));
  }

  /**
   * A pull that timed out fails naming the version the block is at, which the ask's timeout does not.
   */
  private CompletionStage<BlockProtocol.BlockValues> unreached(String entityId, long minVersion, long start,
      Throwable failure) {
    Throwable cause = Asks.cause(failure);
    if (!(cause instanceof java.util.concurrent.TimeoutException)) return CompletableFuture.failedFuture(failure);
    return stats(entityId).thenCompose(s -> unreachedAt(entityId, minVersion, start, cause, s));
  }

  /** The block's statistics, or null when it does not answer within 2 s (its node may be down: no second full wait). */
  private CompletionStage<BlockProtocol.BlockStats> stats(String entityId) {
    Duration ask = timeout.compareTo(Duration.ofSeconds(2)) < 0 ? timeout : Duration.ofSeconds(2);
    return ParameterBlock.entityRef(system, entityId).<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new, ask)
        .handle((s, e) -> s);
  }

  /**
   * Still a timeout (gRPC answers it as no answer, and its clients pull again), naming how long it
   * waited and, when known, the block's version.
   */
  private CompletionStage<BlockProtocol.BlockValues> unreachedAt(String entityId, long minVersion, long start,
      Throwable cause, BlockProtocol.BlockStats stats) {
    var unanswered = new java.util.concurrent.TimeoutException("block " + entityId + " has no values at version"
        + " >= " + minVersion + " after " + Math.round((System.nanoTime() - start) / 1e9) + " s (shardtrain"
        + ".trainer.ask-timeout " + timeout.toSeconds() + " s)" + (stats == null ? ""
        : ": it is at version " + stats.version()));
    unanswered.initCause(cause);
    return CompletableFuture.failedFuture(unanswered);
  }
}
