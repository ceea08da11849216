import java.util.concurrent.atomic.AtomicInteger;

/**
 * How fast one core reads what the other has just written, against reading what it wrote itself:
 * the cost a second compute thread pays for every activation or gradient that crosses between the
 * two. Two threads take turns: the writer fills a buffer, then the reader copies it into a buffer
 * of its own (the cross-core case), or the writer copies it itself (the local case). Not part of
 * the build or the tests.
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
    long crossNanos = 0;
    for (int r = 0; r < rounds; r++) {
      while (turn.get() != 2 * r) Thread.onSpinWait();
      fill(buffer, r);
      long t0 = System.nanoTime();
      turn.set(2 * r + 1);
      while (turn.get() != 2 * r + 2) Thread.onSpinWait();
      if (r >= rounds / 2) crossNanos += System.nanoTime() - t0;
    }
    long localNanos = 0;
    for (int r = 0; r < rounds; r++) {
      fill(buffer, r);
      long t0 = System.nanoTime();
      System.arraycopy(buffer, 0, writerCopy, 0, floats);
      if (r >= rounds / 2) localNanos += System.nanoTime() - t0;
    }
    double bytes = 4.0 * floats;
    double cross = crossNanos / (rounds / 2.0);
    double local = localNanos / (rounds / 2.0);
    System.out.printf("%d KiB: read on the other core %.1f us (%.1f GB/s, hand-off included), on the writer's %.1f us"
        + " (%.1f GB/s)%n", floats / 256, cross / 1e3, bytes / cross, local / 1e3, bytes / local);
  }

  static void fill(float[] b, int r) {
    for (int i = 0; i < b.length; i++) b[i] = i + r;
  }
}
