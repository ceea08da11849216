package io.shardtrain.actors.grpc;

import akka.actor.typed.ActorSystem;
import akka.grpc.Trailers;
import akka.http.javadsl.ConnectionContext;
import akka.http.javadsl.Http;
import akka.http.javadsl.ServerBinding;
import akka.http.javadsl.ServerBuilder;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.settings.ServerSettings;
import akka.japi.function.Function;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.security.SecuritySettings;
import io.shardtrain.grpc.ShardTrainApiHandlerFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Serves the gRPC API ({@code src/main/protobuf/shardtrain.proto}) on a node where ShardTrain runs,
 * over akka-http's HTTP/2 at {@code shardtrain.grpc.host:port}: plaintext (prior knowledge), or,
 * with {@code shardtrain.security.enabled}, over TLS with the node's key, every call checked for
 * the cluster's bearer token ({@link BearerTokenCheck}).
 */
public final class GrpcServer {
  private GrpcServer() {}

  /** Serves the API when {@code shardtrain.grpc.port} is set (>= 0); else nothing. */
  public static Optional<CompletionStage<ServerBinding>> startIfConfigured(ShardTrain api) {
    GrpcSettings settings = GrpcSettings.create(api.system());
    return settings.serves() ? Optional.of(start(api, settings)) : Optional.empty();
  }

  /**
   * The listener's HTTP settings: HTTP/2 (gRPC needs it; on for this listener only), and an idle
   * timeout that outlasts the longest wait of a call. Akka HTTP closes a connection on which no byte
   * passed for {@code akka.http.server.idle-timeout} (60 s by default) even while a call on it waits
   * for its answer, and the client then sees UNAVAILABLE with no reason; a checkpoint waits longest
   * ({@link ShardTrainGrpcService#checkpointWait}), so the timeout is at least that plus
   * {@link #IDLE_MARGIN}, and the call's own error arrives first.
   */
  static ServerSettings listenerSettings(Config config) {
    ServerSettings http2 = ServerSettings.create(ConfigFactory.parseString("akka.http.server.enable-http2 = on")
        .withFallback(config));
    Duration longest = ShardTrainGrpcService.checkpointWait(config).plus(IDLE_MARGIN);
    scala.concurrent.duration.Duration idle = http2.getTimeouts().idleTimeout();
    if (idle.isFinite() && idle.toMillis() < longest.toMillis()) {
      http2 = http2.withTimeouts(http2.getTimeouts().withIdleTimeout(
          scala.concurrent.duration.Duration.create(longest.toMillis(), TimeUnit.MILLISECONDS)));
    }
    return http2;
  }

  static final Duration IDLE_MARGIN = Duration.ofSeconds(10);

  /**
   * The API's request handler. akka-grpc gzips an answer whenever gzip comes first in the request's
   * {@code grpc-accept-encoding} (gRPC's Java client sends only gzip), with no setting of its own; without
   * {@code compress-responses} that header is dropped first, so answers go uncompressed (requests
   * a client compressed are still read).
   */
  static Function<HttpRequest, CompletionStage<HttpResponse>> handler(ShardTrain api, GrpcSettings settings) {
    ActorSystem<?> system = api.system();
    Function<HttpRequest, CompletionStage<HttpResponse>> generated = ShardTrainApiHandlerFactory.create(
        new ShardTrainGrpcService(api, settings), sys -> failure -> new Trailers(ApiError.statusOf(failure)), system);
    if (settings.compressResponses()) return generated;
    return request -> generated.apply(request.removeHeader(ACCEPT_ENCODING));
  }

  static final String ACCEPT_ENCODING = "grpc-accept-encoding";

  /** Binds the API at {@code settings}' host and port (0: a free one; the binding says which). */
  public static CompletionStage<ServerBinding> start(ShardTrain api, GrpcSettings settings) {
    ActorSystem<?> system = api.system();
    SecuritySettings security = SecuritySettings.create(system);
    Function<HttpRequest, CompletionStage<HttpResponse>> handler = handler(api, settings);
    ServerBuilder server = Http.get(system).newServerAt(settings.host(), settings.port())
        .withSettings(listenerSettings(system.settings().config()));
    if (security.enabled()) {
      // HTTP/2 over TLS, negotiated by ALPN; clients authenticate with the token, not a key.
      server = server.enableHttps(ConnectionContext.httpsServer(security.sslContext(true)));
      handler = new BearerTokenCheck(handler, security.token(), system);
    }
    return server.bind(handler)
        .thenApply(binding -> {
          system.log().info("gRPC API at {}:{}{}", settings.host(), binding.localAddress().getPort(),
              security.enabled() ? " (TLS, bearer token)" : "");
          if (!security.enabled() && !binding.localAddress().getAddress().isLoopbackAddress()) {
            system.log().warn("the gRPC API listens on {}, not loopback, without TLS or authentication: whoever reaches"
                + " it can submit jobs and push gradients", binding.localAddress());
          }
          return binding;
        });
  }
}
