package io.shardtrain.actors.grpc;

import akka.pattern.StatusReply;
import io.grpc.Status;
import io.shardtrain.actors.transport.Asks;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Why the gRPC API refused or failed a call: each type maps to one gRPC status code, and its
 * message names the problem. The service fails a call with {@link Failure}; {@link #statusOf}
 * turns any failure into the status the client gets.
 */
public sealed interface ApiError {
  Status.Code code();

  String message();

  default Status status() {
    return Status.fromCode(code()).withDescription(message());
  }

  /** A request field that is missing or out of range, or a job description that does not parse. */
  record BadRequest(String problem) implements ApiError {
    public Status.Code code() {
      return Status.Code.INVALID_ARGUMENT;
    }

    public String message() {
      return problem;
    }
  }

  /** A gradient whose length is not its block's. */
  record WrongShape(String blockId, int got, int expected) implements ApiError {
    public Status.Code code() {
      return Status.Code.INVALID_ARGUMENT;
    }

    public String message() {
      return "gradient for block " + blockId + " has " + got + " values; the block holds " + expected;
    }
  }

  /** No job has been submitted to this cluster. */
  record NoJob() implements ApiError {
    public Status.Code code() {
      return Status.Code.FAILED_PRECONDITION;
    }

    public String message() {
      return "no job has been submitted to this cluster";
    }
  }

  /** The call names a job the cluster does not have: never submitted, or {@code deleted}. */
  record UnknownJob(String asked, boolean deleted) implements ApiError {
    public Status.Code code() {
      return Status.Code.FAILED_PRECONDITION;
    }

    public String message() {
      return deleted ? "job '" + asked + "' was deleted: its blocks and progress are gone (its id stays taken)"
          : "unknown job '" + asked + "': this cluster has no such job";
    }
  }

  /** A block id the job does not have. */
  record UnknownBlock(String jobId, String blockId) implements ApiError {
    public Status.Code code() {
      return Status.Code.NOT_FOUND;
    }

    public String message() {
      return "job '" + jobId + "' has no block '" + blockId + "'";
    }
  }

  /** The master or a block answered with an error (its reply says why). */
  record Refused(String by, String reason) implements ApiError {
    public Status.Code code() {
      return Status.Code.FAILED_PRECONDITION;
    }

    public String message() {
      return by + " refused: " + reason;
    }
  }

  /** The cluster cannot do it yet (too few ps nodes joined); asking again later may succeed. */
  record NotReady(String why) implements ApiError {
    public Status.Code code() {
      return Status.Code.UNAVAILABLE;
    }

    public String message() {
      return why;
    }
  }

  /** The cluster did not answer within the timeout. */
  record NoAnswer(String from, Duration after) implements ApiError {
    public Status.Code code() {
      return Status.Code.UNAVAILABLE;
    }

    public String message() {
      return "no answer from " + from + " within " + after.toMillis() + " ms";
    }
  }

  /** Anything else: a bug or an environment problem on the serving node. */
  record Internal(String what) implements ApiError {
    public Status.Code code() {
      return Status.Code.INTERNAL;
    }

    public String message() {
      return what;
    }
  }

  /** The exception a call fails with. */
  final class Failure extends RuntimeException {
    private final ApiError error;

    public Failure(ApiError error) {
      super(error.message(), null, false, false);
      this.error = error;
    }

    public ApiError error() {
      return error;
    }
  }

  static Failure fail(ApiError error) {
    return new Failure(error);
  }

  /**
   * The error behind {@code failure} of a call to {@code from}, whose asks wait {@code timeout}:
   * an {@link ApiError} as thrown, the actor's {@link StatusReply} error as a refusal, a timeout as
   * no answer, an {@link IllegalArgumentException} (a record's check) as a bad request.
   */
  static ApiError of(Throwable failure, String from, Duration timeout) {
    Throwable t = Asks.cause(failure);
    if (t instanceof Failure f) return f.error();
    if (t instanceof StatusReply.ErrorMessage e) return new Refused(from, e.getMessage());
    if (t instanceof TimeoutException || t instanceof akka.pattern.AskTimeoutException) return new NoAnswer(from, timeout);
    if (t instanceof IllegalArgumentException e) return new BadRequest(e.getMessage());
    if (t instanceof IllegalStateException e) return new Refused(from, e.getMessage());
    return new Internal(t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage()));
  }

  /** The status a client gets for {@code failure}. */
  static Status statusOf(Throwable failure) {
    Throwable t = Asks.cause(failure);
    if (t instanceof Failure f) return f.error().status();
    if (t instanceof io.grpc.StatusRuntimeException s) return s.getStatus();
    // A record's check of a value the request carried (a task mark's offset, say), thrown on the way.
    if (t instanceof IllegalArgumentException e) return new BadRequest(e.getMessage()).status();
    return new Internal(t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage())).status();
  }
}
