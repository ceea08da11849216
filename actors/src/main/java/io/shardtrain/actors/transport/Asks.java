package io.shardtrain.actors.transport;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;

/**
 * Akka's ask stages for the data path. The stage Akka's Java ask returns (Scala's future converter)
 * runs even its non-async callbacks ({@code thenApply}, {@code whenComplete}) on the default async
 * executor; with the common pool's parallelism below 2, as on a 2-core machine, that is a new
 * thread per callback, thousands per second on a trainer's step path.
 */
public final class Asks {
  private Asks() {}

  /** The system property that sizes the common pool, which is CompletableFuture's default async executor. */
  public static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  /**
   * Gives the common pool two threads where it would have one (a machine of 2 cores or fewer) and
   * nobody sized it, so that the callbacks Akka's converted stages and akka-grpc's generated handlers
   * run asynchronously go to a pooled thread instead of a new thread each: on a 2-core node serving
   * a Python trainer, about a third of the node's CPU. Takes effect only before anything touches
   * CompletableFuture or the common pool: a launcher's first statement.
   */
  public static void poolAsyncCallbacks() {
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null && Runtime.getRuntime().availableProcessors() <= 2) {
      System.setProperty(COMMON_POOL_PARALLELISM, "2");
    }
  }

  /** Whether CompletableFuture's async callbacks run on pooled threads rather than a new thread each. */
  public static boolean asyncCallbacksPooled() {
    return ForkJoinPool.getCommonPoolParallelism() > 1;
  }

  /**
   * What an asynchronous step failed with, rather than the wrappers ({@link
   * java.util.concurrent.CompletionException}, {@link java.util.concurrent.ExecutionException}) that
   * carried it, whose messages start with its class name.
   */
  public static Throwable cause(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof java.util.concurrent.CompletionException
        || t instanceof java.util.concurrent.ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** {@code stage} as a plain future completed on the thread its reply arrives on: attach only quick callbacks. */
  public static <T> CompletableFuture<T> onArrival(CompletionStage<T> stage) {
    return completeOnArrival(stage, new CompletableFuture<>());
  }

  /** Completes {@code target} as {@code stage} completes, on the thread its reply arrives on; returns {@code target}. */
  public static <T> CompletableFuture<T> completeOnArrival(CompletionStage<? extends T> stage,
      CompletableFuture<T> target) {
    stage.whenCompleteAsync((value, failure) -> {
      if (failure != null) {
        target.completeExceptionally(failure);
      } else {
        target.complete(value);
      }
    }, Runnable::run);
    return target;
  }
}
