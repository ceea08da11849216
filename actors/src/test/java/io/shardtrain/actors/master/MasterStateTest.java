package io.shardtrain.actors.master;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The master's state on its own, without an actor. */
class MasterStateTest {
  @Test
  void aCopyIsUnchangedByEventsAppliedToTheStateItWasTakenFrom() {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 20, "a", 2);
    s.left("a");
    MasterState copy = s.copy();
    var before = copy.status();

    s.settled(0, 0, "a", 28, 3, Map.of("w#0", 36L));
    s.joined("c", null);
    s.leased(0, 0, "c");
    s.progressed(0, 0, 40, "c", 5);
    s.checkpointCommitted(s.checkpointAt(5, ""));
    s.rolledBack(5, 1);

    assertEquals(before, copy.status());
    MasterState.TaskState t = copy.task(0, 0);
    assertEquals(List.of(20L, 0L), List.of(t.offset, t.floorOffset));
    assertEquals("a", t.settlingFor);
    assertNull(t.leasedTo);
    assertEquals(Map.of(), t.skip);
    assertEquals(1, t.history.size());
    assertEquals(List.of("b"), List.copyOf(copy.members().keySet()));
    assertEquals(2, copy.registration("a").lastStep());
  }
}
