package io.shardtrain.actors.master;

import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MembershipBroadcastTest {
  static final List<String> BLOCKS = MasterTest.job().blocks();

  static MasterState withMembers(String... trainers) {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    for (String t : trainers) s.joined(t, null);
    return s;
  }

  @Test
  void theMembershipGoesToEveryBlockAndAgainToThoseThatHaveNotAcknowledgedIt() {
    RecordingBlocks blocks = new RecordingBlocks();
    MembershipBroadcast membership = new MembershipBroadcast(blocks);
    MasterState s = withMembers("a", "b");
    membership.broadcast(s);
    assertEquals(List.of("membership w#0 2 [a, b]", "membership w#1 2 [a, b]"), blocks.take());
    membership.acked("w#0", 2);
    membership.acked("w#1", -1); // its update failed
    membership.resend(s);
    assertEquals(List.of("membership w#1 2 [a, b]"), blocks.take());
    membership.acked("w#1", 2);
    membership.acked("w#0", -1); // a late failure of an older update
    membership.resend(s);
    assertEquals(List.of(), blocks.take());
    assertTrue(membership.allKnow(BLOCKS, 2));
    assertFalse(membership.allKnow(BLOCKS, 3));
  }

  @Test
  void nothingIsSentBeforeAJobIsSubmitted() {
    RecordingBlocks blocks = new RecordingBlocks();
    MembershipBroadcast membership = new MembershipBroadcast(blocks);
    membership.broadcast(new MasterState());
    membership.resend(new MasterState());
    assertEquals(List.of(), blocks.take());
  }

  @Test
  void aTrainerThatJoinedARunningJobMayLeaseOnceEveryBlockKnowsItsEpoch() {
    MembershipBroadcast membership = new MembershipBroadcast(new RecordingBlocks());
    assertTrue(membership.mayLease("a", BLOCKS), "a trainer of the job's start");
    membership.joinedRunning("c", 3);
    membership.acked("w#0", 3);
    membership.acked("w#1", 2);
    assertFalse(membership.mayLease("c", BLOCKS));
    membership.acked("w#1", 4);
    assertTrue(membership.mayLease("c", BLOCKS));
    membership.joinedRunning("d", 5);
    membership.left("d");
    assertTrue(membership.mayLease("d", BLOCKS), "forgotten when it left");
  }
}
