package io.shardtrain.compute.backend;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads that compute the slices of a parallel GEMM besides the caller's own, or their
 * parts of a whole training step ({@link CrewStep}).
 *
 * <p>A training step calls a handful of products of a fraction of a millisecond each, one right
 * after another. Waking a parked thread for each of them (an executor's queue) cost tens of µs a
 * product on this project's virtual machines, which halved what a second thread gave. So a worker
 * spins for {@link #SPIN_NANOS} after each slice, waiting for the next, and the caller spins while
 * its slices finish; only a worker idle for longer parks, and one idle for {@link #IDLE_NANOS}
 * ends, so an unused backend holds no thread.
 *
 * <p>Safe for concurrent callers: a slice whose worker already holds one that it has not taken
 * runs on the caller.
 *
 * <p>Each run adds to {@link #totals()}, what a step profile splits a parallel product into: the
 * caller's slices, the workers', the hand-offs and the caller's wait for the last worker. Exact with
 * one caller at a time, as a model's step is.
 */
final class GemmCrew {
  /** How long a worker spins for the next slice before it parks. */
  static final long SPIN_NANOS = 200_000L;
  /** How long a parked worker waits for work before its thread ends. */
  static final long IDLE_NANOS = 30_000_000_000L;
  private static final AtomicInteger CREW_IDS = new AtomicInteger();

  private final Worker[] workers;
  private long runs, callerNanos, workerNanos, handoffNanos, waitNanos;

  GemmCrew(int workers) {
    this(workers, IDLE_NANOS);
  }

  /** A crew whose idle workers end after {@code idleNanos} (tests shorten it). */
  GemmCrew(int workers, long idleNanos) {
    int id = CREW_IDS.incrementAndGet();
    this.workers = new Worker[workers];
    for (int i = 0; i < workers; i++) {
      this.workers[i] = new Worker("shardtrain-gemm-" + id + "-" + (i + 1), idleNanos);
    }
  }

  /** How many workers have a thread now. */
  int liveThreads() {
    int n = 0;
    for (Worker w : workers) n += w.running.get();
    return n;
  }

  /** Runs {@code slices[0]} on the caller and the others on the workers; returns when all ended. */
  void run(Runnable[] slices) {
    long offered = System.nanoTime();
    Job job = new Job(slices.length - 1, offered);
    for (int i = 1; i < slices.length; i++) {
      Worker w = i - 1 < workers.length ? workers[i - 1] : null;
      if (w == null || !w.offer(new Slice(slices[i], job))) job.run(slices[i], false);
    }
    job.run(slices[0], false);
    long callerDone = System.nanoTime();
    try {
      job.await();
    } finally {
      runs++;
      callerNanos += callerDone - offered;
      waitNanos += System.nanoTime() - callerDone;
      workerNanos += job.workerNanos.get();
      handoffNanos += job.handoffNanos.get();
    }
  }

  /**
   * {runs, caller, workers, hand-offs, wait} since this crew began, in nanoseconds: how many
   * parallel runs; the caller's time from handing out the slices to the end of its own (and of any
   * it ran for a busy worker); the workers' slices, summed; from hand-out to each worker's start,
   * summed; the caller's wait after its own slice for the workers still running.
   */
  long[] totals() {
    return new long[] {runs, callerNanos, workerNanos, handoffNanos, waitNanos};
  }

  /** One parallel product: how many slices are still out, the first failure, and the workers' times. */
  private static final class Job {
    private final AtomicInteger pending;
    private final long offered;
    private final AtomicLong workerNanos = new AtomicLong();
    private final AtomicLong handoffNanos = new AtomicLong();
    private volatile Throwable failure;

    Job(int pending, long offered) {
      this.pending = new AtomicInteger(pending + 1);
      this.offered = offered;
    }

    /**
     * Runs a slice and counts it done. A worker's is timed, its times added before the count goes
     * down, so the caller sees them after {@link #await}.
     */
    void run(Runnable slice, boolean onWorker) {
      long start = onWorker ? System.nanoTime() : 0;
      if (onWorker) handoffNanos.addAndGet(start - offered);
      try {
        slice.run();
      } catch (Throwable t) {
        if (failure == null) failure = t;
      } finally {
        if (onWorker) workerNanos.addAndGet(System.nanoTime() - start);
        pending.decrementAndGet();
      }
    }

    void await() {
      long start = System.nanoTime();
      int spins = 0;
      while (pending.get() > 0) {
        // A worker that was descheduled, or started afresh, may take long: stop burning the core.
        if (++spins < 1024 || System.nanoTime() - start < SPIN_NANOS) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      }
      Throwable t = failure;
      if (t instanceof RuntimeException re) throw re;
      if (t instanceof Error e) throw e;
      if (t != null) throw new IllegalStateException("gemm worker failed", t);
    }
  }

  private record Slice(Runnable work, Job job) {}

  /** A worker thread, started when first needed and again after it ended idle. */
  private static final class Worker implements Runnable {
    private final String name;
    private final long idleNanos;
    /** The slice handed to this worker and not yet taken; one at a time, so a second caller sees it busy. */
    private final AtomicReference<Slice> mailbox = new AtomicReference<>();
    /** 1 while a thread runs this worker. */
    private final AtomicInteger running = new AtomicInteger();
    private volatile Thread thread;
    private volatile boolean parked;

    Worker(String name, long idleNanos) {
      this.name = name;
      this.idleNanos = idleNanos;
    }

    /** Hands {@code slice} to this worker; false if it is busy with another. */
    boolean offer(Slice slice) {
      if (!mailbox.compareAndSet(null, slice)) return false;
      if (running.get() == 0 && running.compareAndSet(0, 1)) {
        try {
          Thread t = new Thread(this, name);
          t.setDaemon(true);
          thread = t;
          t.start();
        } catch (Throwable e) {
          // No thread (the process is out of them): the caller runs the slice, and a later offer tries again.
          running.set(0);
          mailbox.set(null);
          return false;
        }
      } else if (parked) {
        LockSupport.unpark(thread);
      }
      return true;
    }

    @Override
    public void run() {
      while (true) {
        Slice s = awaitSlice();
        if (s != null) {
          // Free the mailbox before the count goes down: the caller's next product offers right away.
          mailbox.set(null);
          s.job().run(s.work(), true);
          continue;
        }
        running.set(0);
        // A slice offered after the last look but before running went to 0 found this thread
        // still running and was not given a new one: take it back unless a new thread did.
        if (mailbox.get() == null || !running.compareAndSet(0, 1)) return;
      }
    }

    /** The next slice: spin, then park; null after {@code idleNanos} without one. */
    private Slice awaitSlice() {
      long start = System.nanoTime();
      for (int spins = 0; ; spins++) {
        Slice s = mailbox.get();
        if (s != null) return s;
        if ((spins & 63) != 0 || System.nanoTime() - start < SPIN_NANOS) {
          Thread.onSpinWait();
          continue;
        }
        parked = true;
        if (mailbox.get() == null) LockSupport.parkNanos(this, idleNanos);
        parked = false;
        s = mailbox.get();
        if (s != null) return s;
        if (System.nanoTime() - start >= idleNanos) return null;
      }
    }
  }
}
