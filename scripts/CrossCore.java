import java.util.concurrent.atomic.AtomicInteger;

/**
 * How fast one core reads what the other has just written, against reading what it wrote itself,
 * and how fast it writes again what the other has just read, against writing what only it touches:
 * the two costs a second compute thread pays for every activation or gradient that crosses between
 * the two each step (the reader fetches each line from the writer's cache; the writer's next write
 * must take each line back from the reader's). Two threads take turns: the writer fills a buffer
 * (timed: the write after the other core's read), then the reader copies it into a buffer of its
 * own (the cross-core read); then, alone, the writer fills and copies it itself (the local cases).
 * Not part of the build; the tests only compile it.
 *
 * <pre>
 * java scripts/CrossCore.java [KIB]
 * </pre>
 */
public class CrossCore {
  public static void main(String[] args) throws Exception {
    int floats = (args.length > 0 ? Integer.parseInt(args[0]) : 128) * 256;
    float[] buffer = new float[floats];
    AtomicInteger turn = new AtomicInteger();
    int rounds = 20_000;
    float[] readerCopy = new float[floats];
    float[] writerCopy = new float[floats];
    Thread reader = new Thread(() -> {
      for (int r = 0; r < rounds; r++) {
        while (turn.get() != 2 * r + 1) Thread.onSpinWait();
        System.arraycopy(buffer, 0, readerCopy, 0, floats);
        turn.set(2 * r + 2);
      }
    });
    reader.setDaemon(true);
    reader.start();
    long crossNanos = 0, rewriteNanos = 0;
    for (int r = 0; r < rounds; r++) {
      while (turn.get() != 2 * r) Thread.onSpinWait();
      long w0 = System.nanoTime();
      fill(buffer, r);
      long t0 = System.nanoTime();
      if (r >= rounds / 2) rewriteNanos += t0 - w0;
      turn.set(2 * r + 1);
      while (turn.get() != 2 * r + 2) Thread.onSpinWait();
      if (r >= rounds / 2) crossNanos += System.nanoTime() - t0;
    }
    long localNanos = 0, writeNanos = 0;
    for (int r = 0; r < rounds; r++) {
      long w0 = System.nanoTime();
      fill(buffer, r);
      long t0 = System.nanoTime();
      if (r >= rounds / 2) writeNanos += t0 - w0;
      System.arraycopy(buffer, 0, writerCopy, 0, floats);
      if (r >= rounds / 2) localNanos += System.nanoTime() - t0;
    }
    double bytes = 4.0 * floats;
    double cross = crossNanos / (rounds / 2.0);
    double local = localNanos / (rounds / 2.0);
    double rewrite = rewriteNanos / (rounds / 2.0);
    double write = writeNanos / (rounds / 2.0);
    System.out.printf("%d KiB: read on the other core %.1f us (%.1f GB/s, hand-off included), on the writer's %.1f us"
        + " (%.1f GB/s); written again after the other core's read %.1f us (%.1f GB/s), with no other core's read"
        + " %.1f us (%.1f GB/s)%n", floats / 256, cross / 1e3, bytes / cross, local / 1e3, bytes / local,
        rewrite / 1e3, bytes / rewrite, write / 1e3, bytes / write);
  }

  static void fill(float[] b, int r) {
    java.util.Arrays.fill(b, r);
  }
}
