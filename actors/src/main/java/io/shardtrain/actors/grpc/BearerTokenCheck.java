package io.shardtrain.actors.grpc;

import akka.actor.ClassicActorSystemProvider;
import akka.http.javadsl.model.ContentTypes;
import akka.http.javadsl.model.HttpEntities;
import akka.http.javadsl.model.HttpHeader;
import akka.http.javadsl.model.HttpRequest;
import akka.http.javadsl.model.HttpResponse;
import akka.http.javadsl.model.MediaTypes;
import akka.http.javadsl.model.StatusCodes;
import akka.http.javadsl.model.headers.RawHeader;
import akka.japi.function.Function;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Lets a gRPC call through to the API only when it carries {@code authorization: Bearer <token>}
 * with the cluster's token ({@code shardtrain.security.token-file}); any other call ends at once
 * with {@code UNAUTHENTICATED}, before its request is read. It wraps the HTTP handler, so every
 * call of the service is covered, present and future.
 */
final class BearerTokenCheck implements Function<HttpRequest, CompletionStage<HttpResponse>> {
  private static final akka.http.javadsl.model.ContentType GRPC =
      ContentTypes.create(MediaTypes.customBinary("application", "grpc+proto", false));

  private final Function<HttpRequest, CompletionStage<HttpResponse>> api;
  private final byte[] expected;
  private final ClassicActorSystemProvider system;

  BearerTokenCheck(Function<HttpRequest, CompletionStage<HttpResponse>> api, String token,
      ClassicActorSystemProvider system) {
    this.api = api;
    this.expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    this.system = system;
  }

  @Override
  public CompletionStage<HttpResponse> apply(HttpRequest request) throws Exception {
    Optional<HttpHeader> auth = request.getHeader("authorization");
    // Constant time: the comparison tells nothing of how much of a guess was right.
    if (auth.isPresent() && MessageDigest.isEqual(auth.get().value().getBytes(StandardCharsets.UTF_8), expected)) {
      return api.apply(request);
    }
    request.discardEntityBytes(system);
    return CompletableFuture.completedFuture(unauthenticated(auth.isEmpty()
        ? "no bearer token: this node requires 'authorization: Bearer <token>' (shardtrain.security.token-file)"
        : "wrong bearer token (shardtrain.security.token-file)"));
  }

  /** A trailers-only gRPC answer: HTTP 200, the status in the headers, no message. */
  static HttpResponse unauthenticated(String description) {
    return HttpResponse.create().withStatus(StatusCodes.OK)
        .addHeader(RawHeader.create("grpc-status", Integer.toString(Status.Code.UNAUTHENTICATED.value())))
        .addHeader(RawHeader.create("grpc-message", description))
        .withEntity(HttpEntities.create(GRPC, new byte[0]));
  }
}
