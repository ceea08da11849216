package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol.TaskProgress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class TaskSettlerTest {
  /** Trainers a (task 0/0, reported offset 20 at step 2) and b (task 0/1); a has left. */
  static MasterState aLeftAtOffset20() {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.leased(0, 1, "b");
    s.progressed(0, 0, 20, "a", 2);
    s.left("a");
    return s;
  }

  static TaskSettler settler(RecordingBlocks blocks) {
    return new TaskSettler(blocks, LoggerFactory.getLogger(TaskSettlerTest.class));
  }

  @Test
  void everyBlockIsAskedOnceAndAgainOnlyAfterItsAnswerFailed() {
    RecordingBlocks blocks = new RecordingBlocks();
    TaskSettler settler = settler(blocks);
    MasterState s = aLeftAtOffset20();
    settler.askMissing(s);
    assertEquals(List.of("mark w#0 0/0 g0", "mark w#1 0/0 g0"), blocks.take());
    settler.askMissing(s);
    assertEquals(List.of(), blocks.take(), "the answers are still out");
    assertNull(settler.answered(s, 0, 0, "w#0", 0, new TaskProgress(36, 4), null));
    assertNull(settler.answered(s, 0, 0, "w#1", 0, null, new RuntimeException("timed out")));
    settler.askMissing(s);
    assertEquals(List.of("mark w#1 0/0 g0"), blocks.take(), "only the block that failed");
  }

  @Test
  void onceEveryBlockAnsweredTheTaskResumesWhereAllHoldItAndNamesTheBlocksAhead() {
    TaskSettler settler = settler(new RecordingBlocks());
    MasterState s = aLeftAtOffset20();
    settler.askMissing(s);
    assertNull(settler.answered(s, 0, 0, "w#0", 0, new TaskProgress(36, 4), null));
    assertEquals(new Master.TaskSettled(0, 0, "a", 28, 3, Map.of("w#0", 36L)),
        settler.answered(s, 0, 0, "w#1", 0, new TaskProgress(28, 3), null));
  }

  @Test
  void blocksSeveralBatchesPastTheReportResumeTheTaskWhereTheLastOfThemIsAndSkipTheOthersUpToTheirOwn() {
    // Reported: 20 at step 2. Unreported: steps 3 to 6 (batches of 8) reached w#0, steps 3 to 5 w#1.
    TaskState t = aLeftAtOffset20().task(0, 0);
    assertEquals(new Master.TaskSettled(0, 0, "a", 44, 5, Map.of("w#0", 50L)), TaskSettler.settle(t,
        List.of("w#0", "w#1"), Map.of("w#0", new TaskProgress(50, 6), "w#1", new TaskProgress(44, 5))));
    // Every block got all of them: nothing to skip.
    assertEquals(new Master.TaskSettled(0, 0, "a", 50, 6, Map.of()), TaskSettler.settle(t,
        List.of("w#0", "w#1"), Map.of("w#0", new TaskProgress(50, 6), "w#1", new TaskProgress(50, 6))));
  }

  @Test
  void aBlockBehindTheReportedOffsetHoldsTheTaskUpToIt() {
    TaskState t = aLeftAtOffset20().task(0, 0);
    assertEquals(new Master.TaskSettled(0, 0, "a", 20, 0, Map.of("w#1", 50L)), TaskSettler.settle(t,
        List.of("w#0", "w#1"), Map.of("w#0", new TaskProgress(0, 0), "w#1", new TaskProgress(70, 9))));
  }

  @Test
  void anAnswerOfAnotherGenerationOrForATaskNoLongerSettlingIsIgnored() {
    TaskSettler settler = settler(new RecordingBlocks());
    MasterState s = aLeftAtOffset20();
    settler.askMissing(s);
    assertNull(settler.answered(s, 0, 0, "w#0", 1, new TaskProgress(36, 4), null));
    assertNull(settler.answered(s, 0, 1, "w#0", 0, new TaskProgress(36, 4), null), "b's task is not settling");
    assertNull(settler.answered(s, 0, 0, "w#1", 0, new TaskProgress(28, 3), null),
        "w#0 has not answered in generation 0");
  }

  @Test
  void answersForgottenAfterARollbackAreAskedForAgain() {
    RecordingBlocks blocks = new RecordingBlocks();
    TaskSettler settler = settler(blocks);
    MasterState s = aLeftAtOffset20();
    settler.askMissing(s);
    settler.answered(s, 0, 0, "w#0", 0, new TaskProgress(36, 4), null);
    settler.answered(s, 0, 0, "w#1", 0, null, new RuntimeException("timed out"));
    blocks.take();
    settler.clear();
    settler.askMissing(s);
    assertEquals(List.of("mark w#0 0/0 g0", "mark w#1 0/0 g0"), blocks.take());
  }

  @Test
  void theRingSettlesADepartedMembersTaskAtItsMarkAndOnlyInTheCurrentMembershipEpoch() {
    MasterState s = aLeftAtOffset20();
    List<JobProtocol.RingMark> marks = List.of(new JobProtocol.RingMark("a", 0, 0, 44, 7),
        new JobProtocol.RingMark("b", 0, 1, 40, 7));
    // A ring of an older membership (a newer one will send again) settles nothing.
    assertEquals(List.of(), TaskSettler.fromRing(s,
        new JobProtocol.SettleFromRing("b", 0, s.membershipEpoch() - 1, 7, marks)));
    assertEquals(List.of(new Master.TaskSettled(0, 0, "a", 44, 7, Map.of())), TaskSettler.fromRing(s,
        new JobProtocol.SettleFromRing("b", 0, s.membershipEpoch(), 7, marks)));
    // Without a mark for the task (a had no data since its report): where a reported it.
    assertEquals(List.of(new Master.TaskSettled(0, 0, "a", 20, 0, Map.of())), TaskSettler.fromRing(s,
        new JobProtocol.SettleFromRing("b", 0, s.membershipEpoch(), 7, List.of(marks.get(1)))));
  }

  @Test
  void theRingSettlesTheTaskOfARestartedMembersOldActor() {
    MasterState s = new MasterState().submitted(MasterTest.job(), null);
    s.joined("a", null);
    s.joined("b", null);
    s.started(2);
    s.leased(0, 0, "a");
    s.progressed(0, 0, 16, "a", 2);
    // a's node restarted before its death was noticed: the new actor registers under the same id.
    s.joined("a", null);
    List<JobProtocol.RingMark> marks = List.of(new JobProtocol.RingMark("a", 0, 0, 24, 3));
    assertEquals(List.of(new Master.TaskSettled(0, 0, "a", 24, 3, Map.of())), TaskSettler.fromRing(s,
        new JobProtocol.SettleFromRing("b", 0, s.membershipEpoch(), 3, marks)));
  }
}
