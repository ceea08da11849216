package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.pattern.StatusReply;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.grpc.DatasetShape;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Which status code each failure of a call becomes, and what a job description is refused for. */
class ApiErrorTest {
  static final Duration WAIT = Duration.ofMillis(1500);

  @Test
  void eachErrorTypeHasItsCodeAndAMessageNamingTheProblem() {
    assertEquals(Status.Code.INVALID_ARGUMENT, new ApiError.WrongShape("w#0", 3, 8).code());
    assertEquals("gradient for block w#0 has 3 values; the block holds 8", new ApiError.WrongShape("w#0", 3, 8).message());
    assertEquals(Status.Code.FAILED_PRECONDITION, new ApiError.UnknownJob("a", false).code());
    assertEquals(Status.Code.FAILED_PRECONDITION, new ApiError.NoJob().code());
    assertEquals(Status.Code.NOT_FOUND, new ApiError.UnknownBlock("j", "x#0").code());
    assertEquals(Status.Code.UNAVAILABLE, new ApiError.NotReady("1 of 2 ps nodes").code());
    assertEquals(Status.Code.UNAVAILABLE, new ApiError.NoAnswer("the master", WAIT).code());
    assertEquals("no answer from the master within 1500 ms", new ApiError.NoAnswer("the master", WAIT).message());
  }

  @Test
  void failuresOfAsksMapByTheirType() {
    // An actor's error reply is a refusal, with its reason.
    ApiError refused = ApiError.of(new CompletionException(new StatusReply.ErrorMessage("push is ahead")), "block b#0", WAIT);
    assertEquals(new ApiError.Refused("block b#0", "push is ahead"), refused);
    assertEquals("block b#0 refused: push is ahead", refused.message());
    assertEquals(new ApiError.NoAnswer("the master", WAIT), ApiError.of(new TimeoutException("x"), "the master", WAIT));
    assertEquals(new ApiError.BadRequest("bad mark"), ApiError.of(new IllegalArgumentException("bad mark"), "b", WAIT));
    // An error of the API itself passes through, however wrapped.
    ApiError.Failure typed = ApiError.fail(new ApiError.UnknownBlock("j", "x#0"));
    assertEquals(new ApiError.UnknownBlock("j", "x#0"), ApiError.of(new CompletionException(typed), "b", WAIT));
    Status status = ApiError.statusOf(new CompletionException(typed));
    assertEquals(Status.Code.NOT_FOUND, status.getCode());
    assertEquals("job 'j' has no block 'x#0'", status.getDescription());
    assertEquals(Status.Code.INTERNAL, ApiError.statusOf(new NullPointerException("oops")).getCode());
  }

  @Test
  void aJobDescriptionIsRefusedNamingWhatIsWrong() {
    var node = ConfigFactory.load();
    DatasetShape shape = DatasetShape.newBuilder().setInputDim(4).setTrainExamples(100).setClasses(3).build();
    ApiError.Failure syntax = assertThrows(ApiError.Failure.class, () -> JobMessages.plan("a { b = ", shape, node));
    assertEquals(Status.Code.INVALID_ARGUMENT, syntax.error().code());
    ApiError.Failure mode = assertThrows(ApiError.Failure.class,
        () -> JobMessages.plan("shardtrain.train.mode = fast", shape, node));
    assertTrue(mode.getMessage().startsWith("job description: shardtrain.train.mode must be one of [sync, async"),
        mode.getMessage());
    assertTrue(mode.getMessage().endsWith("got 'fast'"), mode.getMessage());
    assertEquals(io.shardtrain.actors.ps.BlockSpec.Mode.ASYNC, JobMessages.mode(" Async"));
    ApiError.Failure noShape = assertThrows(ApiError.Failure.class,
        () -> JobMessages.plan("", DatasetShape.getDefaultInstance(), node));
    assertEquals(Status.Code.INVALID_ARGUMENT, noShape.error().code());
    var plan = JobMessages.plan("shardtrain.train { job-id = j1, hidden = [5], trainers = 2 }\nshardtrain.ps.block-size = 10",
        shape, node);
    assertEquals("j1", plan.job().jobId());
    // 4x5 weights in two blocks of 10, 5 biases, 5x3 weights in 10 + 5, 3 biases.
    assertEquals(6, plan.job().blocks().size());
    assertEquals(100, plan.job().trainExamples());
  }

  @Test
  void settingsRefuseAPortOutOfRangeAndServeOnlyFromZeroUp() {
    var config = ConfigFactory.load();
    assertEquals(new GrpcSettings("127.0.0.1", -1, Duration.ofSeconds(10)),
        GrpcSettings.fromConfig(config));
    assertEquals(false, GrpcSettings.fromConfig(config).serves());
    assertEquals(true, new GrpcSettings("127.0.0.1", 0, WAIT).serves());
    assertThrows(IllegalArgumentException.class, () -> new GrpcSettings("127.0.0.1", 70000, WAIT));
    assertThrows(IllegalArgumentException.class, () -> new GrpcSettings(" ", 1, WAIT));
  }
}
