package io.shardtrain.actors.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AsksTest {
  @Test
  void aFailureIsReportedByItsOwnMessageNotItsWrappersClassName() {
    java.io.UncheckedIOException failure = new java.io.UncheckedIOException("writing checkpoint /srv/ckpt/step-20: No"
        + " space left on device", new java.io.IOException("No space left on device"));
    java.util.concurrent.CompletionException wrapped = new java.util.concurrent.CompletionException(failure);
    assertEquals("java.io.UncheckedIOException: writing checkpoint /srv/ckpt/step-20: No space left on device",
        wrapped.getMessage(), "what the master said of a failed checkpoint before");
    assertEquals("writing checkpoint /srv/ckpt/step-20: No space left on device", Asks.cause(wrapped).getMessage());
    assertSame(failure, Asks.cause(new ExecutionException(wrapped)));
    assertSame(failure, Asks.cause(failure));
  }

  private static ActorTestKit kit;

  /** A request whose answer is its number doubled, or the word to answer the request held. */
  sealed interface Request {}

  record Double(int n, ActorRef<Integer> replyTo) implements Request {}

  enum Answer implements Request { NOW }

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("asks");
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void anAsksCallbacksRunOnTheThreadThatAnsweredNotOnAnotherOne() throws Exception {
    // Holds a request until told to answer it, so the callback is attached before the answer comes.
    ActorRef<Request> doubler = kit.spawn(Behaviors.<Request>setup(ctx -> {
      Double[] held = new Double[1];
      return Behaviors.receiveMessage(m -> {
        if (m instanceof Double d) held[0] = d;
        else held[0].replyTo().tell(2 * held[0].n());
        return Behaviors.same();
      });
    }));
    for (int i = 0; i < 20; i++) {
      int n = i;
      CompletableFuture<String> thread = Asks.onArrival(AskPattern.<Request, Integer>ask(doubler,
              r -> new Double(n, r), Duration.ofSeconds(5), kit.system().scheduler()))
          .thenApply(v -> v + " on " + Thread.currentThread().getName());
      doubler.tell(Answer.NOW);
      String answer = thread.get(5, TimeUnit.SECONDS);
      assertTrue(answer.startsWith(2 * n + " on asks-akka.actor.default-dispatcher-"),
          "run by the thread of the actor that answered: " + answer);
    }
  }

  @Test
  void aFailedAskFailsTheFutureWithItsCause() {
    ActorRef<Request> silent = kit.spawn(Behaviors.ignore());
    CompletableFuture<Integer> f = Asks.onArrival(AskPattern.<Request, Integer>ask(silent, r -> new Double(1, r),
        Duration.ofMillis(50), kit.system().scheduler()));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> f.get(5, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof java.util.concurrent.TimeoutException, "timed out: " + e.getCause());
  }

  /**
   * Prints the class of CompletableFuture's default async executor and the common pool's size, after
   * {@code poolAsyncCallbacks} if the first argument is "pool".
   */
  public static final class DefaultExecutorMain {
    public static void main(String[] args) {
      if (args.length > 0 && args[0].equals("pool")) Asks.poolAsyncCallbacks();
      System.out.print(new CompletableFuture<Void>().defaultExecutor().getClass().getName() + " "
          + ForkJoinPool.getCommonPoolParallelism());
    }
  }

  static String defaultExecutorAndPoolOfAFreshJvm(int cores, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:ActiveProcessorCount=" + cores, "-cp", System.getProperty("java.class.path"),
        DefaultExecutorMain.class.getName()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
    // Options inherited from the environment could set the pool's size, or print on stdout.
    builder.environment().remove("JAVA_TOOL_OPTIONS");
    builder.environment().remove("JDK_JAVA_OPTIONS");
    Process p = builder.start();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the JVM ended within 30 s");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), out);
    return out;
  }

  @Test
  void onTwoCoresAsyncCallbacksGetANewThreadEachUnlessTheLauncherPoolsThemFirst() throws Exception {
    assertEquals("java.util.concurrent.CompletableFuture$ThreadPerTaskExecutor 1", defaultExecutorAndPoolOfAFreshJvm(2));
    assertEquals("java.util.concurrent.ForkJoinPool 2", defaultExecutorAndPoolOfAFreshJvm(2, "pool"));
    // Where the common pool has two threads or more anyway, its size is left alone.
    assertEquals("java.util.concurrent.ForkJoinPool 3", defaultExecutorAndPoolOfAFreshJvm(4, "pool"));
  }

  @Test
  void completeOnArrivalCompletesTheGivenFuture() throws Exception {
    CompletableFuture<Integer> target = new CompletableFuture<>();
    CompletableFuture<Integer> source = new CompletableFuture<>();
    assertSame(target, Asks.completeOnArrival(source, target));
    source.complete(7);
    assertEquals(7, target.get(1, TimeUnit.SECONDS));
  }
}
