package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.allreduce.Replica;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Momentum;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

class RingHandoverTest {

  private static Replica replica(float... values) {
    return new Replica(List.of(new Parameter("w", Tensor.of(values, values.length))), new Momentum(0.9f, false, 0f),
        LearningRateSchedule.parse("constant", 0.1f), 8);
  }

  @Test
  void eachTrainersNewestMarkIsKeptByNameAcrossRings() {
    RingHandover h = new RingHandover();
    // Ring [t1, t2, t3]: positions 0 and 2 had data in step 4 (position, task epoch, task, offset).
    h.stepApplied(4, new long[] {0, 0, 1, 32, 2, 0, 3, 64}, List.of("t1", "t2", "t3"));
    // Ring [t1, t3] after t2 left: t3 is position 1 now.
    h.stepApplied(5, new long[] {1, 0, 3, 96}, List.of("t1", "t3"));
    List<JobProtocol.RingMark> marks = h.marks().stream()
        .sorted(Comparator.comparing(JobProtocol.RingMark::trainerId)).toList();
    assertEquals(List.of(new JobProtocol.RingMark("t1", 0, 1, 32, 4), new JobProtocol.RingMark("t3", 0, 3, 96, 5)),
        marks);
  }

  @Test
  void aTransferInAnyOrderRestoresValuesSlotsCountersAndMarks() {
    RingHandover from = new RingHandover();
    from.stepApplied(7, new long[] {0, 1, 2, 48}, List.of("t1", "t2"));
    Replica source = replica(1f, 2f);
    Replica target = replica(0f, 0f);
    RingLink.TransferEnd end = from.end(3, 7, source, true);
    assertEquals(2, end.parts());
    List<float[]> parts = source.export();

    RingHandover to = new RingHandover();
    to.expect(3, 7);
    // The end first, then the parts in reverse, and a part of an older ring that must not count.
    to.end(end);
    to.part(new RingLink.TransferPart(2, 7, 0, new float[] {5f, 5f}));
    assertFalse(to.complete(3, 7));
    to.part(new RingLink.TransferPart(3, 7, 1, parts.get(1)));
    assertFalse(to.complete(3, 7));
    to.part(new RingLink.TransferPart(3, 7, 0, parts.get(0)));
    assertTrue(to.complete(3, 7));
    assertTrue(to.restore(target), "the ring leaves after step 7");
    assertArrayEquals(parts.get(0), target.export().get(0));
    assertArrayEquals(parts.get(1), target.export().get(1));
    assertEquals(List.of(new JobProtocol.RingMark("t1", 1, 2, 48, 7)), to.marks());
  }

  @Test
  void partsThatArriveBeforeTheMemberWaitsForThemAreKept() {
    Replica source = replica(3f);
    RingHandover to = new RingHandover();
    List<float[]> parts = source.export();
    to.part(new RingLink.TransferPart(4, 10, 0, parts.get(0)));
    to.part(new RingLink.TransferPart(4, 10, 1, parts.get(1)));
    to.end(new RingHandover().end(4, 10, source, false));
    to.expect(4, 10);
    assertTrue(to.complete(4, 10));
    assertFalse(to.complete(4, 11), "another step's transfer");
  }
}
