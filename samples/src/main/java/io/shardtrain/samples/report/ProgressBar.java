package io.shardtrain.samples.report;

import java.io.PrintStream;

/**
 * Training progress on the terminal: one line redrawn in place on a console, plain lines at most
 * every few seconds when output goes to a file or a pipe (so logs stay readable).
 */
public final class ProgressBar {
  private static final int WIDTH = 30;
  private final PrintStream out;
  private final boolean interactive;
  private final long total;
  private final long plainEveryNanos;
  private final boolean showSteps;
  private long lastPrint;
  private boolean dirty;

  public ProgressBar(PrintStream out, boolean interactive, long totalSteps, double plainEverySeconds) {
    this.out = out;
    this.interactive = interactive;
    this.total = totalSteps;
    this.plainEveryNanos = (long) (plainEverySeconds * 1e9);
    this.showSteps = plainEverySeconds > 0;
    this.lastPrint = System.nanoTime();
  }

  /** Prints only messages (evaluations), no step updates. */
  public static ProgressBar messagesOnly(PrintStream out) {
    return new ProgressBar(out, false, 0, 0);
  }

  /** A bar on stderr, redrawn in place when stderr is a terminal. */
  public static ProgressBar forTerminal(long totalSteps) {
    return new ProgressBar(System.err, System.console() != null, totalSteps, 5.0);
  }

  public void update(long step, double samplesPerSec, double loss) {
    if (!showSteps) return;
    long now = System.nanoTime();
    if (interactive) {
      if (now - lastPrint < 100_000_000L && step < total) return;
      int filled = total > 0 ? (int) Math.min(WIDTH, WIDTH * step / total) : 0;
      out.printf("\r[%s%s] step %d/%d  %,.0f samples/s  loss %.4f ", "#".repeat(filled),
          " ".repeat(WIDTH - filled), step, total, samplesPerSec, loss);
      dirty = true;
    } else {
      if (now - lastPrint < plainEveryNanos && step < total) return;
      out.printf("step %d/%d  %.0f samples/s  loss %.4f%n", step, total, samplesPerSec, loss);
    }
    out.flush();
    lastPrint = now;
  }

  /** A message on its own line, without breaking the bar. */
  public void message(String line) {
    if (dirty) {
      out.println();
      dirty = false;
    }
    out.println(line);
    out.flush();
  }

  public void finish() {
    if (dirty) out.println();
    dirty = false;
    out.flush();
  }
}
