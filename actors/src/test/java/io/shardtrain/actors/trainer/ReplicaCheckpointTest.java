package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.actors.allreduce.Replica;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Momentum;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplicaCheckpointTest {
  @TempDir
  Path root;

  private static Parameter parameter(String name, float... values) {
    return new Parameter(name, Tensor.of(values, values.length));
  }

  private static Replica replica(Parameter w, Parameter b) {
    return new Replica(List.of(w, b), new Momentum(0.9f, false, 0f), LearningRateSchedule.parse("constant", 0.1f), 8);
  }

  private static void step(Replica r, Parameter w, Parameter b, float g) {
    float[] gw = w.grad().data();
    for (int i = 0; i < gw.length; i++) gw[i] = g * (i + 1);
    b.grad().data()[0] = -g;
    r.apply(8);
  }

  @Test
  void aReplicaReadBackFromItsCheckpointHasTheSameValuesSlotsCountersAndMarksAndTrainsOnIdentically()
      throws IOException {
    Parameter w1 = parameter("w", 0.5f, -1.25f, 3f);
    Parameter b1 = parameter("b", 0.1f);
    Replica source = replica(w1, b1);
    step(source, w1, b1, 0.3f);
    step(source, w1, b1, -0.7f);
    RingHandover marks = new RingHandover();
    // Ring [t1, t2]: both had data in step 2 (position, task epoch, task, offset).
    marks.stepApplied(2, new long[] {0, 0, 0, 16, 1, 0, 1, 16}, List.of("t1", "t2"));
    Path dir = ReplicaCheckpoint.dir(root, "job-a", 2);
    new ReplicaCheckpoint(marks.end(4, 2, source, false), source.export()).write(dir);

    ReplicaCheckpoint read = ReplicaCheckpoint.read(dir);
    Parameter w2 = parameter("w", 9f, 9f, 9f);
    Parameter b2 = parameter("b", 9f);
    Replica restored = replica(w2, b2);
    RingHandover restoredMarks = new RingHandover();
    assertFalse(restoredMarks.restore(restored, read.parts(), read.end()));

    assertEquals(2, read.step());
    List<float[]> expected = source.export();
    // Values and the momentum slot of each parameter.
    assertEquals(4, expected.size());
    for (int i = 0; i < expected.size(); i++) assertArrayEquals(expected.get(i), restored.export().get(i), "part " + i);
    assertEquals(List.of(16L, 2L), List.of(restored.examplesApplied(), restored.updates()));
    Comparator<JobProtocol.RingMark> byTrainer = Comparator.comparing(JobProtocol.RingMark::trainerId);
    assertEquals(marks.marks().stream().sorted(byTrainer).toList(),
        restoredMarks.marks().stream().sorted(byTrainer).toList());

    step(source, w1, b1, 0.45f);
    step(restored, w2, b2, 0.45f);
    assertArrayEquals(w1.value().data(), w2.value().data());
    assertArrayEquals(b1.value().data(), b2.value().data());
  }

  @Test
  void onlyTheThreeNewestCheckpointsOfAJobStay() throws IOException {
    Parameter w = parameter("w", 1f);
    Parameter b = parameter("b", 2f);
    Replica r = replica(w, b);
    for (long step = 5; step <= 20; step += 5) {
      new ReplicaCheckpoint(new RingHandover().end(1, step, r, false), r.export())
          .write(ReplicaCheckpoint.dir(root, "job-a", step));
    }
    try (Stream<Path> dirs = Files.list(root.resolve("job-a"))) {
      assertEquals(List.of("ring-step-10", "ring-step-15", "ring-step-20"),
          dirs.map(p -> p.getFileName().toString()).sorted().toList());
    }
  }

  @Test
  void aFileThatIsNotAReplicaCheckpointIsRefused() throws IOException {
    Path dir = Files.createDirectories(root.resolve("other"));
    Files.write(dir.resolve(ReplicaCheckpoint.FILE), new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    assertThrows(IOException.class, () -> ReplicaCheckpoint.read(dir));
  }
}
