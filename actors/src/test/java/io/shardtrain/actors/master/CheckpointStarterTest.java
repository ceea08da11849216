package io.shardtrain.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class CheckpointStarterTest {
  @Test
  void aFailedCheckpointIsReportedByItsOwnMessageNotItsWrappersClassName() {
    UncheckedIOException failure = new UncheckedIOException("writing checkpoint /srv/ckpt/step-20: No space left on"
        + " device", new IOException("No space left on device"));
    CompletionException wrapped = new CompletionException(failure);
    assertEquals("java.io.UncheckedIOException: writing checkpoint /srv/ckpt/step-20: No space left on device",
        wrapped.getMessage(), "what the master said before");
    assertEquals("writing checkpoint /srv/ckpt/step-20: No space left on device",
        CheckpointStarter.cause(wrapped).getMessage());
  }
}
