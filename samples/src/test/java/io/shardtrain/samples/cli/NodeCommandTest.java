package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NodeCommandTest {
  @Test
  void aJobFileWithoutAJobIdNamesItsJobAfterTheFileSoARestartSubmitsTheSameJob() {
    assertEquals("mnist-sync", NodeCommand.jobIdOf(Path.of("jobs", "mnist-sync.conf")));
    assertEquals("job", NodeCommand.jobIdOf(Path.of("job")));
    assertEquals("a.b", NodeCommand.jobIdOf(Path.of("a.b.conf")));
    assertEquals(".conf", NodeCommand.jobIdOf(Path.of(".conf")));
  }
}
