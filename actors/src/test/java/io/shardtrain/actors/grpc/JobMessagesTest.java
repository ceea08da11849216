package io.shardtrain.actors.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.Status;
import io.shardtrain.compute.fuzz.Hostile;
import io.shardtrain.grpc.ClickThroughShape;
import io.shardtrain.grpc.DatasetShape;
import org.junit.jupiter.api.Test;

/** Planning a submitted job from its description: what a caller may not make the node do. */
class JobMessagesTest {
  static final Config NODE = ConfigFactory.load();
  static final DatasetShape SHAPE = DatasetShape.newBuilder().setInputDim(3).setTrainExamples(40).setClasses(2).build();
  static final String JOB = "shardtrain.train { job-id = \"j\", hidden = [4], trainers = 1, mode = async }\n";

  private static Status refusal(String job, DatasetShape shape) {
    ApiError.Failure f = assertThrows(ApiError.Failure.class, () -> JobMessages.plan(job, shape, NODE));
    return f.error().status();
  }

  @Test
  void aJobDescriptionPlansWithSelfReferences() {
    assertEquals(6, JobMessages.plan(JOB + "six = 6\nshardtrain.train.batch = ${six}", SHAPE, NODE)
        .job().batch());
  }

  @Test
  void aJobDescriptionCannotReadTheNodesEnvironment() {
    // The job id is echoed in replies and errors: a substitution would read the node's environment out.
    Status s = refusal(JOB + "shardtrain.train.job-id = ${HOME}", SHAPE);
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
    assertTrue(s.getDescription().contains("HOME"), s.getDescription());
    assertFalse(s.getDescription().contains(System.getenv("HOME")), s.getDescription());
  }

  @Test
  void aJobDescriptionCannotIncludeTheNodesFiles() {
    Status s = refusal("include file(\"/etc/hostname\")\n" + JOB, SHAPE);
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
    assertTrue(s.getDescription().contains("a job description may not include anything (it includes /etc/hostname)"),
        s.getDescription());
  }

  @Test
  void aModelAboveTheLimitIsRefusedBeforeItIsBuilt() {
    // 40000 x 40000 weights are 6.4 GB in the node's heap, yet one tensor under 2^31 floats.
    DatasetShape wide = SHAPE.toBuilder().setInputDim(40_000).build();
    long before = Hostile.allocatedBytes();
    Status s = refusal(JOB.replace("[4]", "[40000]"), wide);
    assertTrue(Hostile.allocatedBytes() - before < 16 << 20);
    assertEquals(Status.INVALID_ARGUMENT.withDescription("a model of input_dim 40000, hidden [40000] and 2 classes has"
        + " 1600120002 parameters, more than shardtrain.grpc.max-model-floats = 67108864").toString(), s.toString());
  }

  @Test
  void aClickThroughModelAboveTheLimitIsRefusedBeforeItIsBuilt() {
    // 2^28 dense features with 8 factors are 2^31 + 2^28 + 1 floats: an int wraps that negative.
    DatasetShape ctr = DatasetShape.newBuilder().setInputDim(1 << 28).setTrainExamples(40)
        .setClickThrough(ClickThroughShape.newBuilder().setFields(26).setHashSpace(1 << 20)).build();
    ApiError.Failure f = assertThrows(ApiError.Failure.class,
        () -> JobMessages.ctrPlan("shardtrain.train { job-id = \"c\", mode = async }", ctr, NODE));
    assertEquals(Status.INVALID_ARGUMENT.withDescription("a click-through model of input_dim 268435456 and 8 factors"
        + " has 2415919105 dense parameters, more than shardtrain.grpc.max-model-floats = 67108864").toString(),
        f.error().status().toString());
  }
}
