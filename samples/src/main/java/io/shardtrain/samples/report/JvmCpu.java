package io.shardtrain.samples.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * CPU time of this JVM and of its JIT compiler threads, cheap enough to read at every trainer step
 * (a few microseconds). The process's comes from the OS bean; the compiler threads' from Linux's
 * per-thread {@code schedstat} files (nanoseconds on a CPU), kept open and read again in place. The
 * JVM's own compile-time counter is no substitute: it adds up how long each compilation took from
 * start to end, which on a busy machine includes the time its thread waited for a core.
 *
 * <p>Counts the compiler threads alive when first asked (on two cores HotSpot starts one C1 and one
 * C2 thread with the JVM; on larger machines it may start more later, which are then not counted).
 */
public final class JvmCpu {
  private static final Path TASKS = Path.of("/proc/self/task");

  private JvmCpu() {}

  /** This process's CPU time in ns (on Linux in 10 ms ticks), or -1 where the JVM does not tell. */
  public static long processNanos() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime() : -1;
  }

  /** The JIT compiler threads' CPU time in ns, summed; -1 where the OS does not tell (not Linux). */
  public static long compilerNanos() {
    return Compilers.INSTANCE == null ? -1 : Compilers.INSTANCE.nanos();
  }

  /** The compiler threads' schedstat files, found once. */
  private static final class Compilers {
    static final Compilers INSTANCE = find();

    private final List<FileChannel> files;
    private final long[] last;
    private final ByteBuffer buffer = ByteBuffer.allocate(128);

    private Compilers(List<FileChannel> files) {
      this.files = files;
      this.last = new long[files.size()];
    }

    private static Compilers find() {
      if (!Files.isDirectory(TASKS)) return null;
      List<FileChannel> files = new ArrayList<>();
      try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
        for (Path task : tasks) {
          String name;
          try {
            name = Files.readString(task.resolve("comm")).trim();
          } catch (IOException e) {
            continue; // the thread ended meanwhile
          }
          // HotSpot's names, cut to Linux's 15 characters: "C2 CompilerThre", "C1 CompilerThre".
          if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
            Path stat = task.resolve("schedstat");
            if (Files.isReadable(stat)) files.add(FileChannel.open(stat));
          }
        }
      } catch (IOException e) {
        return null;
      }
      return files.isEmpty() ? null : new Compilers(files);
    }

    synchronized long nanos() {
      long sum = 0;
      for (int i = 0; i < files.size(); i++) {
        try {
          buffer.clear();
          int n = files.get(i).read(buffer, 0);
          // "ns-on-cpu ns-waiting timeslices"
          String text = new String(buffer.array(), 0, Math.max(0, n), StandardCharsets.US_ASCII);
          int space = text.indexOf(' ');
          if (space > 0) last[i] = Long.parseLong(text.substring(0, space));
        } catch (IOException | NumberFormatException e) {
          // A compiler thread that ended keeps the CPU time it had.
        }
        sum += last[i];
      }
      return sum;
    }
  }
}
