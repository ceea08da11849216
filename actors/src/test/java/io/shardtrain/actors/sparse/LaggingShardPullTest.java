package io.shardtrain.actors.sparse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.ManualTime;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** When a batch's pull asks a table shard again: only once another shard answered and this one lags it. */
class LaggingShardPullTest {
  private static final Duration AFTER = Duration.ofMillis(200);
  private static ActorTestKit kit;
  private static ManualTime time;
  private final AtomicLong now = new AtomicLong();
  /** Each shard's requests, in the order sent. */
  private final List<List<CompletableFuture<Rows>>> sent = List.of(new ArrayList<>(), new ArrayList<>());

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create(ManualTime.config());
    time = ManualTime.get(kit.system());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private LaggingShardPull pull(Duration after) {
    return new LaggingShardPull(2, s -> {
      CompletableFuture<Rows> f = new CompletableFuture<>();
      sent.get(s).add(f);
      return f;
    }, after, kit.system().scheduler(), now::get);
  }

  private void pass(long millis) {
    for (long m = 0; m < millis; m += 100) {
      now.addAndGet(100_000_000L);
      time.timePasses(Duration.ofMillis(100));
    }
  }

  private static Rows rows(int shard) {
    return new Rows("t", shard, 1, new long[] {shard}, new float[] {shard});
  }

  @Test
  void aShardThatLagsTheOthersAnswerIsAskedAgainAfterWaitsThatDoubleAndItsFirstAnswerIsTaken() throws Exception {
    LaggingShardPull p = pull(AFTER);
    sent.get(0).get(0).complete(rows(0));
    pass(100);
    assertEquals(1, sent.get(1).size(), "not before resend-after");
    pass(100);
    assertEquals(2, sent.get(1).size(), "200 ms after shard 0 answered");
    pass(300);
    assertEquals(2, sent.get(1).size(), "the next wait is 400 ms");
    pass(100);
    assertEquals(3, sent.get(1).size(), "400 ms after the first resend");
    pass(800);
    assertEquals(4, sent.get(1).size(), "then 800 ms");
    assertEquals(1, sent.get(0).size(), "shard 0 answered: asked once");

    Rows second = rows(1);
    sent.get(1).get(1).complete(second);
    sent.get(1).get(0).completeExceptionally(new TimeoutException("the lost request's ask timed out"));
    assertSame(second, p.answer(1).get());
    pass(5000);
    assertEquals(4, sent.get(1).size(), "answered: asked no more");
  }

  @Test
  void theWaitStopsGrowingAtSixteenTimesResendAfter() {
    pull(AFTER);
    sent.get(0).get(0).complete(rows(0));
    // Resends at 0.2, 0.6, 1.4, 3.0, 6.2 s, then every 3.2 s (16 x 200 ms): 9.4, 12.6 s.
    pass(12_600);
    assertEquals(1 + 7, sent.get(1).size());
  }

  @Test
  void nothingGoesAgainWhileNoShardHasAnsweredOrWithoutAResendWait() {
    pull(AFTER);
    pass(10_000);
    assertEquals(1, sent.get(0).size());
    assertEquals(1, sent.get(1).size());

    sent.get(0).clear();
    sent.get(1).clear();
    pull(null);
    sent.get(0).get(0).complete(rows(0));
    pass(10_000);
    assertEquals(1, sent.get(1).size(), "no resend wait: each shard asked once");
  }

  @Test
  void aShardFailsOnlyWhenEveryRequestToItFailed() throws Exception {
    LaggingShardPull p = pull(AFTER);
    sent.get(0).get(0).complete(rows(0));
    pass(200);
    assertEquals(2, sent.get(1).size());
    sent.get(1).get(0).completeExceptionally(new TimeoutException("first"));
    assertFalse(p.answer(1).isDone(), "the second request may still answer");
    sent.get(1).get(1).completeExceptionally(new TimeoutException("second"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> p.answer(1).get());
    assertEquals("second", e.getCause().getMessage());
    assertTrue(p.answer(0).isDone() && !p.answer(0).isCompletedExceptionally());
  }
}
