package io.shardtrain.samples.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ApiExampleTest {
  @Test
  void theReadmeExampleTrainsAModelThroughTheProgrammaticApi() throws Exception {
    double accuracy = ApiExample.run();
    // Three well-separated blobs: chance is 33%.
    assertTrue(accuracy > 0.9, "test accuracy " + accuracy);
  }
}
