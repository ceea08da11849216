package io.shardtrain.actors.transport;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Akka's ask stages for the data path. The stage Akka's Java ask returns (Scala's future converter)
 * runs even its non-async callbacks ({@code thenApply}, {@code whenComplete}) on the default async
 * executor; with the common pool's parallelism below 2, as on a 2-core machine, that is a new
 * thread per callback, thousands per second on a trainer's step path.
 */
public final class Asks {
  private Asks() {}

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
