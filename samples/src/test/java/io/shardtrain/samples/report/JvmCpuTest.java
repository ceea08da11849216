package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JvmCpuTest {

  /** A second of arithmetic on this thread shows in the process's CPU time. */
  @Test
  void processCpuTimeGrowsWithWorkOnAThread() {
    long before = JvmCpu.processNanos();
    assumeTrue(before >= 0, "the JVM does not tell its CPU time");
    long end = System.nanoTime() + 300_000_000L;
    double x = 0;
    while (System.nanoTime() < end) x += Math.sqrt(x + 1);
    long after = JvmCpu.processNanos();
    assertTrue(after - before >= 250_000_000L, "process CPU grew by " + (after - before) + " ns; " + x);
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
