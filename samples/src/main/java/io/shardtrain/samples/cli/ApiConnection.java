package io.shardtrain.samples.cli;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.protobuf.ProtoUtils;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.grpc.ClusterStatus;
import io.shardtrain.grpc.ShardTrainApi;
import io.shardtrain.grpc.StatusRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A command-line client's connection to a node's gRPC API: a plain grpc-java channel and the
 * messages generated from {@code shardtrain.proto}. No ActorSystem: starting one costs a cold JVM
 * about two seconds, longer than the call. {@link #connect} comes first, with a short deadline,
 * so an address where nothing answers fails fast and names that address; a node that answers
 * slowly (a master that is moving) gets the command's own timeout. With
 * {@code shardtrain.security.enabled} it speaks TLS, trusting the cluster's CA, and every call
 * carries the cluster's bearer token.
 */
final class ApiConnection implements AutoCloseable {
  /** How long the channel may take to start its first connection attempt (class loading, not the network). */
  static final Duration SETUP = Duration.ofSeconds(30);

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  /**
   * grpc-java's channel logs a host name that does not resolve at WARNING, with a 20-line stack
   * trace, before the call fails; the command's own error names the address and the cause. Held
   * here, so that the level set stays with the logger.
   */
  static final Logger CHANNEL_LOG = Logger.getLogger("io.grpc.internal.ManagedChannelImpl");

  static {
    CHANNEL_LOG.setLevel(Level.SEVERE);
  }

  private final String target;
  private final ManagedChannel channel;
  /** "Bearer TOKEN", or null without security. */
  private final String authorization;

  private ApiConnection(String host, int port, SecuritySettings security) {
    this.target = host + ":" + port;
    if (security.enabled()) {
      this.authorization = "Bearer " + security.token();
      this.channel = Grpc.newChannelBuilderForAddress(host, port,
          TlsChannelCredentials.newBuilder().trustManager(security.trustManagers()).build()).build();
    } else {
      this.authorization = null;
      this.channel = ManagedChannelBuilder.forAddress(host, port).usePlaintext().build();
    }
  }

  /** Connects to {@code hostPort} (HOST:PORT) in plaintext; nothing is sent yet. */
  static ApiConnection open(String hostPort) {
    return open(hostPort, SecuritySettings.off());
  }

  /** Connects to {@code hostPort} (HOST:PORT), over TLS with the token when {@code security} is on. */
  static ApiConnection open(String hostPort, SecuritySettings security) {
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
    return new ApiConnection(hostPort.substring(0, colon), port, security);
  }

  String target() {
    return target;
  }

  /**
   * Connects within {@code within} of the first connection attempt (the server's HTTP/2 settings
   * arrived), or fails naming the address tried: nothing listening, or nothing that speaks gRPC in
   * time. The time to set the channel up (a cold JVM loads gRPC's classes) is not counted.
   */
  void connect(Duration within) {
    ConnectivityState state = channel.getState(true);
    if (state == ConnectivityState.IDLE) state = awaitChange(state, System.nanoTime() + SETUP.toNanos());
    long deadline = System.nanoTime() + within.toNanos();
    while (state != ConnectivityState.READY) {
      if (state == ConnectivityState.TRANSIENT_FAILURE || state == ConnectivityState.SHUTDOWN) {
        // The call fails at once with the connection's error, which says why.
        try {
          call("GetStatus", StatusRequest.getDefaultInstance(), ClusterStatus.getDefaultInstance(), Duration.ofSeconds(1));
        } catch (StatusRuntimeException e) {
          Throwable why = e.getStatus().getCause();
          throw new IllegalStateException("no ShardTrain gRPC API answered at " + target + ": "
              + (why != null ? why.getMessage() : e.getStatus()) + " (is a node running with shardtrain.grpc.port set? "
              + (authorization == null ? "A node with shardtrain.security on needs --security FILE.)"
                  : "Does it run with shardtrain.security on, and does the trust store hold its CA?)"));
        }
        return;
      }
      if (System.nanoTime() >= deadline) {
        throw new IllegalStateException("no ShardTrain gRPC API answered at " + target + " within "
            + within.toSeconds() + " s (is a node running with shardtrain.grpc.port set?)");
      }
      state = awaitChange(state, deadline);
    }
  }

  /**
   * {@link #connect}, tried again while {@code patience} lasts when nothing answers yet (a node
   * just started opens its gRPC port seconds later); {@code waiting} hears the first failure's
   * message once.
   */
  void connectPatiently(Duration within, Duration patience, Consumer<String> waiting) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    boolean told = false;
    while (true) {
      try {
        connect(within);
        return;
      } catch (IllegalStateException e) {
        if (System.nanoTime() + 1_000_000_000L > deadline) throw e;
        if (!told) waiting.accept(e.getMessage());
        told = true;
        Thread.sleep(1000);
        channel.resetConnectBackoff();
      }
    }
  }

  /** The channel's state once it left {@code from}, or at {@code deadline} (nanoTime). */
  private ConnectivityState awaitChange(ConnectivityState from, long deadline) {
    CountDownLatch changed = new CountDownLatch(1);
    channel.notifyWhenStateChanged(from, changed::countDown);
    try {
      changed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to " + target);
    }
    return channel.getState(false);
  }

  /** {@link #connect}, then the cluster's status within {@code timeout}. */
  ClusterStatus probe(boolean includeBlocks, Duration within, Duration timeout) {
    return probe(includeBlocks, "", within, timeout, "status");
  }

  /**
   * {@link #connect}, then the status of job {@code jobId} ("": the newest running one) within
   * {@code timeout}; an error names the command {@code what} asked it for.
   */
  ClusterStatus probe(boolean includeBlocks, String jobId, Duration within, Duration timeout, String what) {
    connect(within);
    return await("GetStatus", StatusRequest.newBuilder().setIncludeBlocks(includeBlocks).setJobId(jobId).build(),
        ClusterStatus.getDefaultInstance(), timeout, what);
  }

  /**
   * The reply of unary call {@code method} of {@code ShardTrainApi} to {@code request}, within
   * {@code deadline}, or the error it ended with; {@code what} names the call in that error.
   */
  <R extends Message> R await(String method, Message request, R replyType, Duration deadline, String what) {
    try {
      return call(method, request, replyType, deadline);
    } catch (StatusRuntimeException e) {
      throw failure(e, what + " at " + target);
    }
  }

  /** As {@link #await}, failing with the call's own {@link StatusRuntimeException}. */
  <R extends Message> R call(String method, Message request, R replyType, Duration deadline) {
    MethodDescriptor<Message, R> descriptor = MethodDescriptor.<Message, R>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(ShardTrainApi.name, method))
        .setRequestMarshaller(ProtoUtils.marshaller(request.getDefaultInstanceForType()))
        .setResponseMarshaller(ProtoUtils.marshaller(replyType))
        .build();
    ClientCall<Message, R> call = channel.newCall(descriptor,
        CallOptions.DEFAULT.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS));
    CompletableFuture<R> reply = new CompletableFuture<>();
    call.start(new ClientCall.Listener<>() {
      private R message;

      @Override
      public void onMessage(R m) {
        message = m;
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (status.isOk() && message != null) {
          reply.complete(message);
        } else {
          reply.completeExceptionally(status.isOk()
              ? Status.INTERNAL.withDescription("no reply message").asRuntimeException() : status.asRuntimeException());
        }
      }
    }, headers());
    call.request(1);
    call.sendMessage(request);
    call.halfClose();
    try {
      // The call's deadline ends it; the margin only guards against a channel that never reports.
      return reply.get(deadline.toMillis() + 5000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StatusRuntimeException s) throw s;
      throw Status.INTERNAL.withCause(e.getCause()).withDescription(String.valueOf(e.getCause())).asRuntimeException();
    } catch (TimeoutException e) {
      call.cancel("no answer", null);
      throw Status.DEADLINE_EXCEEDED.withDescription("no answer within " + deadline.toSeconds() + " s")
          .asRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      call.cancel("interrupted", e);
      throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
    }
  }

  private Metadata headers() {
    Metadata headers = new Metadata();
    if (authorization != null) headers.put(AUTHORIZATION, authorization);
    return headers;
  }

  private static IllegalStateException failure(StatusRuntimeException e, String what) {
    String description = e.getStatus().getDescription();
    return new IllegalStateException(what + ": " + e.getStatus().getCode() + (description == null ? "" : " " + description));
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
