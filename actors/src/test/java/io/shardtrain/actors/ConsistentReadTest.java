package io.shardtrain.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ConsistentReadTest {
  /** Blocks whose version moves as the test says; a pull at a version not reached fails (a timeout). */
  private final Map<String, Long> version = new HashMap<>();
  private final List<String> asked = new ArrayList<>();

  private CompletionStage<BlockValues> pull(String block, long minVersion) {
    asked.add(block + "@" + minVersion);
    long v = version.get(block);
    if (v < minVersion) {
      // A block behind catches up when the pull for the step's version arrives, unless it is stuck.
      if (block.startsWith("stuck")) return CompletableFuture.failedFuture(new TimeoutException("no answer"));
      version.put(block, minVersion);
      v = minVersion;
    }
    return CompletableFuture.completedFuture(new BlockValues(block, 0, 0, v, new float[] {v}));
  }

  @Test
  void blocksOneVersionApartAreReadAgainAtTheNewerVersion() {
    version.put("a", 7L);
    version.put("b", 6L);
    Map<String, BlockValues> read = new ConsistentRead(List.of("a", "b"), this::pull, 5).read()
        .toCompletableFuture().join();
    assertEquals(7, read.get("a").version());
    assertEquals(7, read.get("b").version());
    assertEquals(7f, read.get("b").values()[0]);
    assertEquals(List.of("a@0", "b@0", "a@7", "b@7"), asked);
  }

  @Test
  void blocksAtOneVersionAreReadOnce() {
    version.put("a", 3L);
    version.put("b", 3L);
    new ConsistentRead(List.of("a", "b"), this::pull, 5).read().toCompletableFuture().join();
    assertEquals(List.of("a@0", "b@0"), asked);
  }

  @Test
  void aBlockThatDoesNotReachTheVersionIsNamed() {
    version.put("a", 9L);
    version.put("stuck-b", 8L);
    CompletionException e = assertThrows(CompletionException.class,
        () -> new ConsistentRead(List.of("a", "stuck-b"), this::pull, 5).read().toCompletableFuture().join());
    assertTrue(e.getCause() instanceof ConsistentRead.Inconsistent, String.valueOf(e.getCause()));
    assertEquals("1 of 2 blocks did not reach version 9 ([stuck-b]; the others: {a=9}): their sync barriers may"
        + " wait for a trainer that is gone", e.getCause().getMessage());
  }

  @Test
  void blocksThatKeepMovingAreGivenUpOnAfterTheAttempts() {
    // Every pull finds "a" a step further than "b" was asked for.
    version.put("a", 1L);
    version.put("b", 0L);
    ConsistentRead read = new ConsistentRead(List.of("a", "b"), (block, min) -> {
      if (block.equals("a")) version.put("a", version.get("a") + 1);
      return pull(block, min);
    }, 3);
    CompletionException e = assertThrows(CompletionException.class, () -> read.read().toCompletableFuture().join());
    assertTrue(e.getCause().getMessage().startsWith("the blocks kept moving: 3 reads found them at different"
        + " versions"), e.getCause().getMessage());
  }
}
