package io.shardtrain.samples.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/** What a benchmark's figures depend on besides the code: the machine and the JVM, and when. */
public final class MachineFacts {
  private static final Path CPUINFO = Path.of("/proc/cpuinfo");

  private MachineFacts() {}

  /** cores, cpu (the model /proc/cpuinfo names, or os.arch), os, java, date, load average. */
  public static Map<String, Object> now() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put("cpu", cpuModel(CPUINFO));
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("java", System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
    m.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    // Other jobs on the machine move every figure; the load average says how busy it was.
    m.put("load_average", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    return m;
  }

  /** The first {@code model name} of a cpuinfo file; the architecture where there is none (not Linux, ARM). */
  static String cpuModel(Path cpuinfo) {
    try {
      for (String line : Files.readAllLines(cpuinfo)) {
        int colon = line.indexOf(':');
        if (colon > 0 && line.substring(0, colon).trim().equals("model name")) return line.substring(colon + 1).trim();
      }
    } catch (IOException | SecurityException e) {
      // No cpuinfo to read: the architecture is what is left to say.
    }
    return System.getProperty("os.arch");
  }
}
