package io.shardtrain.actors;

import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;

/**
 * Reads every block of a sync job at one version while the job trains: a block holds only its
 * newest values, so the read pulls them all, and when they disagree (a step was being applied, so
 * blocks are one version apart) pulls them all again at the newest version seen, which a block
 * behind answers the moment it applies that step. It gives up after {@code attempts} reads that
 * disagreed, or when a block behind does not come (its pull fails: a barrier that waits for a
 * trainer that is gone), naming the blocks that lag. Plain: the pulls are given.
 */
public final class ConsistentRead {

  /** The blocks could not be read at one version; the message names which lag, and where. */
  public static final class Inconsistent extends IllegalStateException {
    Inconsistent(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final List<String> blocks;
  private final BiFunction<String, Long, CompletionStage<BlockValues>> pull;
  private final int attempts;

  /** Reads {@code blocks} with {@code pull(block, minVersion)}, at most {@code attempts} times. */
  public ConsistentRead(List<String> blocks, BiFunction<String, Long, CompletionStage<BlockValues>> pull,
      int attempts) {
    if (blocks.isEmpty() || attempts < 1) throw new IllegalArgumentException("need blocks and at least one attempt");
    this.blocks = List.copyOf(blocks);
    this.pull = pull;
    this.attempts = attempts;
  }

  /** Every block's values, all of one version. */
  public CompletionStage<Map<String, BlockValues>> read() {
    return attempt(0, 1);
  }

  private CompletionStage<Map<String, BlockValues>> attempt(long minVersion, int attempt) {
    List<CompletableFuture<BlockValues>> pulls = new ArrayList<>();
    for (String b : blocks) pulls.add(pull.apply(b, minVersion).toCompletableFuture());
    return CompletableFuture.allOf(pulls.toArray(CompletableFuture[]::new)).handle((x, failure) -> {
      Map<String, BlockValues> got = new LinkedHashMap<>();
      List<String> missing = new ArrayList<>();
      Throwable cause = null;
      for (int i = 0; i < blocks.size(); i++) {
        CompletableFuture<BlockValues> f = pulls.get(i);
        if (f.isCompletedExceptionally()) {
          missing.add(blocks.get(i));
          cause = f.handle((v, e) -> e).join();
        } else {
          got.put(blocks.get(i), f.join());
        }
      }
      if (!missing.isEmpty()) {
        throw new Inconsistent(missing.size() + " of " + blocks.size() + " blocks did not reach version " + minVersion
            + " (" + missing + "; the others: " + versions(got) + "): their sync barriers may wait for a trainer"
            + " that is gone", cause);
      }
      return got;
    }).thenCompose(got -> {
      long newest = got.values().stream().mapToLong(BlockValues::version).max().orElseThrow();
      long oldest = got.values().stream().mapToLong(BlockValues::version).min().orElseThrow();
      if (newest == oldest) return CompletableFuture.completedFuture(got);
      if (attempt >= attempts) {
        throw new Inconsistent("the blocks kept moving: " + attempts + " reads found them at different versions,"
            + " last " + versions(got), null);
      }
      return attempt(newest, attempt + 1);
    });
  }

  private static Map<String, Long> versions(Map<String, BlockValues> got) {
    Map<String, Long> v = new LinkedHashMap<>();
    got.forEach((b, values) -> v.put(b, values.version()));
    return v;
  }
}
