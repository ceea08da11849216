package io.shardtrain.samples.cli;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.grpc.GrpcClientSettings;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.ShardTrainApiClient;
import io.shardtrain.grpc.StatusRequest;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A command-line client's connection to a node's gRPC API: a local ActorSystem (no cluster, no
 * remoting) and the generated client. {@link #probe} is the first call, with a short deadline, so
 * an address where nothing answers fails fast and names that address.
 */
final class ApiConnection implements AutoCloseable {
  /** How long the first call may take before the address counts as not answering. */
  static final Duration PROBE = Duration.ofSeconds(4);

  private final String target;
  private final ActorSystem<Void> system;
  private final ShardTrainApiClient client;

  private ApiConnection(String host, int port) {
    this.target = host + ":" + port;
    Config config = ConfigFactory.parseString("""
        akka.actor.provider = local
        akka.loglevel = WARNING
        akka.stdout-loglevel = OFF
        akka.log-dead-letters = off
        akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
        """).withFallback(ConfigFactory.load());
    this.system = ActorSystem.create(Behaviors.empty(), "shardtrain-cli", config);
    this.client = ShardTrainApiClient.create(GrpcClientSettings.connectToServiceAt(host, port, system).withTls(false),
        system);
  }

  /** Connects to {@code hostPort} (HOST:PORT); nothing is sent yet. */
  static ApiConnection open(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    int port = -1;
    if (colon > 0) {
      try {
        port = Integer.parseInt(hostPort.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("--grpc expects HOST:PORT with a port from 1 to 65535, got '" + hostPort + "'");
    }
    return new ApiConnection(hostPort.substring(0, colon), port);
  }

  ShardTrainApiClient client() {
    return client;
  }

  ActorSystem<Void> system() {
    return system;
  }

  String target() {
    return target;
  }

  /** The cluster's status within {@link #PROBE}, or an error naming the address tried. */
  ClusterStatus probe(boolean includeBlocks) {
    try {
      return client.getStatus(StatusRequest.newBuilder().setIncludeBlocks(includeBlocks).build()).toCompletableFuture()
          .get(PROBE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("no ShardTrain gRPC API answered at " + target + " within " + PROBE.toSeconds()
          + " s (is a node running with shardtrain.grpc.port set?)");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StatusRuntimeException s && s.getStatus().getCode() == Status.Code.UNAVAILABLE) {
        Throwable why = s.getCause() != null ? s.getCause() : s;
        throw new IllegalStateException("no ShardTrain gRPC API answered at " + target + ": " + why.getMessage()
            + " (is a node running with shardtrain.grpc.port set?)");
      }
      throw failure(e.getCause(), "ShardTrain gRPC API at " + target);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while asking " + target);
    }
  }

  /** The result of {@code call} within {@code timeout}, or an error naming the address and what went wrong. */
  <T> T await(CompletionStage<T> call, Duration timeout, String what) {
    try {
      return call.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(what + " at " + target + ": no answer within " + timeout.toSeconds() + " s");
    } catch (ExecutionException e) {
      throw failure(e.getCause(), what + " at " + target);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while asking " + target);
    }
  }

  private static IllegalStateException failure(Throwable cause, String what) {
    if (cause instanceof StatusRuntimeException s) {
      String description = s.getStatus().getDescription();
      return new IllegalStateException(what + ": " + s.getStatus().getCode()
          + (description == null ? "" : " " + description));
    }
    return new IllegalStateException(what + ": " + cause);
  }

  @Override
  public void close() {
    try {
      client.close().toCompletableFuture().get(2, TimeUnit.SECONDS);
    } catch (Exception e) {
      // Closing is best effort: the process is about to exit.
    }
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      // As above.
    }
  }
}
