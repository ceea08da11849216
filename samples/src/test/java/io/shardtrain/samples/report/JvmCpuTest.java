package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JvmCpuTest {

  /** A third of a second of this thread's CPU (by its own clock) shows in the process's CPU time. */
  @Test
  void processCpuTimeGrowsWithWorkOnAThread() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long before = JvmCpu.processNanos();
    long threadBefore = threads.getCurrentThreadCpuTime();
    assumeTrue(before >= 0 && threadBefore >= 0, "the JVM does not tell its CPU times");
    double x = 0;
    while (threads.getCurrentThreadCpuTime() - threadBefore < 300_000_000L) {
      for (int i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    }
    long after = JvmCpu.processNanos();
    // The process's clock counts in ticks of 10 ms on Linux.
    assertTrue(after - before >= 280_000_000L, "process CPU grew by " + (after - before) + " ns; " + x);
  }

  /**
   * Methods the JIT has not seen yet, called until compiled, make its compiler threads spend CPU;
   * the reading never goes back.
   */
  @Test
  void compilerThreadsCpuTimeGrowsWhileTheJitCompiles() throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "not Linux");
    long before = JvmCpu.compilerNanos();
    assertTrue(before > 0, "compiler threads' CPU " + before);
    long sum = 0;
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < 200_000; i++) {
      texts.add(Integer.toString(i, 7) + i);
      if (texts.size() > 64) sum += String.join(",", texts).hashCode() + texts.remove(0).chars().sum();
    }
    long end = System.nanoTime() + 5_000_000_000L;
    long after = JvmCpu.compilerNanos();
    while (after <= before && System.nanoTime() < end) {
      Thread.sleep(50);
      after = JvmCpu.compilerNanos();
    }
    assertTrue(after > before, "compiler threads' CPU stayed at " + before + " ns; " + sum);
  }
}
