package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class GemmCrewTest {

  @Test
  void everySliceRunsOnceAndTheCallerRunsTheFirst() {
    GemmCrew crew = new GemmCrew(3);
    for (int round = 0; round < 200; round++) {
      AtomicIntegerArray runs = new AtomicIntegerArray(4);
      Thread[] ranOn = new Thread[4];
      Runnable[] slices = new Runnable[4];
      for (int i = 0; i < 4; i++) {
        int part = i;
        slices[i] = () -> {
          runs.incrementAndGet(part);
          ranOn[part] = Thread.currentThread();
        };
      }
      crew.run(slices);
      for (int i = 0; i < 4; i++) assertEquals(1, runs.get(i), "slice " + i + " of round " + round);
      assertSame(Thread.currentThread(), ranOn[0]);
    }
  }

  /**
   * A caller's slice that spins 2 ms beside a worker's of 5 ms: the totals hold one run, at least
   * 2 ms of the caller's and 5 ms of the worker's, and the caller's slice plus its wait last at
   * least as long as the worker's (the run ends when the worker's slice has).
   */
  @Test
  void totalsSplitARunIntoTheCallersSliceTheWorkersTheHandOffAndTheWait() {
    GemmCrew crew = new GemmCrew(1);
    assertArrayEquals(new long[5], crew.totals());
    crew.run(new Runnable[] {() -> spin(2_000_000), () -> spin(5_000_000)});
    long[] t = crew.totals();
    assertEquals(1, t[0], "runs");
    assertTrue(t[1] >= 2_000_000, "caller " + t[1]);
    assertTrue(t[2] >= 5_000_000, "worker " + t[2]);
    assertTrue(t[3] >= 0, "hand-off " + t[3]);
    assertTrue(t[1] + t[4] >= t[2], "caller " + t[1] + " + wait " + t[4] + " against worker " + t[2]);
    crew.run(new Runnable[] {() -> { }, () -> { }});
    assertEquals(2, crew.totals()[0], "runs");
  }

  private static void spin(long nanos) {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) Thread.onSpinWait();
  }

  @Test
  void aWorkersFailureReachesTheCallerAfterEverySliceEnded() {
    GemmCrew crew = new GemmCrew(1);
    AtomicIntegerArray runs = new AtomicIntegerArray(2);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> crew.run(new Runnable[] {
        () -> runs.incrementAndGet(0),
        () -> {
          runs.incrementAndGet(1);
          throw new IllegalStateException("slice 1 broke");
        }}));
    assertEquals("slice 1 broke", e.getMessage());
    assertEquals(1, runs.get(0));
    assertEquals(1, runs.get(1));
    // The worker survives its slice's failure.
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    crew.run(new Runnable[] {() -> threads.add(Thread.currentThread()), () -> threads.add(Thread.currentThread())});
    assertEquals(2, threads.size());
  }

  @Test
  void concurrentCallersEachGetTheirOwnSlicesRun() throws Exception {
    GemmCrew crew = new GemmCrew(1);
    ExecutorService callers = Executors.newFixedThreadPool(3);
    try {
      List<Future<Integer>> sums = new ArrayList<>();
      for (int c = 0; c < 3; c++) {
        int caller = c;
        sums.add(callers.submit(() -> {
          int total = 0;
          for (int round = 0; round < 300; round++) {
            int[] parts = new int[2];
            crew.run(new Runnable[] {() -> parts[0] = caller + 1, () -> parts[1] = 10 * (caller + 1)});
            total += parts[0] + parts[1];
          }
          return total;
        }));
      }
      for (int c = 0; c < 3; c++) assertEquals(300 * 11 * (c + 1), sums.get(c).get());
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void anIdleWorkersThreadEndsAndANewOneTakesTheNextSlice() throws Exception {
    GemmCrew crew = new GemmCrew(1, 500_000_000L);
    Set<Thread> workers = ConcurrentHashMap.newKeySet();
    crew.run(new Runnable[] {() -> { }, () -> workers.add(Thread.currentThread())});
    assertEquals(1, crew.liveThreads());
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (crew.liveThreads() > 0 && System.nanoTime() < deadline) Thread.sleep(10);
    assertEquals(0, crew.liveThreads(), "the idle worker's thread should have ended");
    Thread first = workers.iterator().next();
    first.join(5_000);
    assertTrue(!first.isAlive());
    crew.run(new Runnable[] {() -> { }, () -> workers.add(Thread.currentThread())});
    assertEquals(2, workers.size(), "a new thread ran the slice after the first ended");
  }
}
