package io.shardtrain.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.shardtrain.actors.job.JobProtocol.JobEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobBookTest {
  @Test
  void aCommandWithoutAJobGoesToTheNewestRunningJobElseTheNewestFinishedOne() {
    JobBook book = new JobBook();
    assertNull(book.current());
    book.opened("a").opened("b").opened("c");
    assertEquals("c", book.current());
    book.finished("c");
    assertEquals("b", book.current());
    book.finished("a").finished("b");
    assertEquals("c", book.current());
    book.deleted("c");
    assertEquals("b", book.current());
  }

  @Test
  void aJobCancelledBeforeItsEndIsListedAsCancelledAndOneThatRanToItsEndAsDone() {
    JobBook book = new JobBook().opened("a").opened("b").opened("c").finished("a", true).finished("b");
    assertEquals(List.of(new JobEntry("a", false, true), new JobEntry("b", false, false), new JobEntry("c", true, false)),
        book.entries());
    assertEquals(List.of("cancelled", "done", "running"), book.entries().stream().map(JobEntry::state).toList());
  }

  @Test
  void aDeletedJobLeavesTheListButItsIdStaysTaken() {
    JobBook book = new JobBook().opened("a").opened("b").finished("a").deleted("a");
    assertEquals(List.of(new JobEntry("b", true)), book.entries());
    assertEquals(JobBook.Stage.DELETED, book.stage("a"));
    assertEquals(List.of("b"), book.running());
    // A late "job ended" of a deleted job does not bring it back.
    book.finished("a");
    assertEquals(JobBook.Stage.DELETED, book.stage("a"));
    assertNull(book.stage("never"));
  }
}
