package io.shardtrain.samples.report;

import io.shardtrain.compute.backend.CrewStep;
import io.shardtrain.compute.backend.TimedBackend;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code --profile} shows of a single-process run: where its training steps' time went, by
 * backend operation and shape ({@link TimedBackend}), the optimizer, {@code data} (the next batch
 * read and copied into the input; a crew step's threads copy their columns in its
 * {@link CrewStep.Phase#READ} phase) and {@code other}, the rest of the step, as printed lines and as
 * the report's {@code profile} object. Parts are whole nanoseconds, so they add up to the step
 * time exactly; means per step are milliseconds. A step that the backend's threads ran together is
 * one part, {@code crew step}, followed by each thread's phases ({@link CrewStep.Phase}).
 */
public final class OpProfileReport {
  static final String OPTIMIZER = "optimizer";
  static final String DATA = "data";
  static final String OTHER = "other";
  static final String CREW_STEP = "crew step";
  private static final String SCOPE = "training steps only, each from reading its batch to the optimizer's last"
      + " update, but the first skipped_steps; evaluation is left out. samples_per_sec times steps the same way and"
      + " counts every one, the skipped ones too";
  private static final String OTHER_INCLUDES = "what runs outside the backend in a step: Dense.forward copying the"
      + " bias into every output row (part of each layer, not timed apart), the loss check and the timers";

  /**
   * One part of the step: a backend operation and shape, or {@code optimizer}, {@code data} or
   * {@code other}; {@code flops}: GEMM's floating-point operations, else 0; {@code slices}: how a
   * GEMM's parallel runs split between the threads, else null.
   */
  public record Part(String name, long calls, long nanos, long flops, TimedBackend.Slices slices) {
    Part(String name, long calls, long nanos, long flops) {
      this(name, calls, nanos, flops, null);
    }
  }

  private final long steps;
  private final long skipped;
  private final long wallNanos;
  private final long backendNanos;
  private final List<Part> parts;
  private final CrewStep.PhaseTimes crew;

  /**
   * {@code steps} steps, those after the run's first {@code skipped} (not profiled), took
   * {@code wallNanos}; of that, {@code ops} ran on the backend, and {@code crew} (or null), the
   * steps the backend's threads ran together, is a part of the backend's time; {@code optimizerNanos}
   * went in {@code optimizerCalls} parameter updates and {@code dataNanos} read and copied batches.
   * The rest is {@code other}.
   */
  public OpProfileReport(long steps, long skipped, long wallNanos, List<TimedBackend.OpTime> ops,
      CrewStep.PhaseTimes crew, long optimizerCalls, long optimizerNanos, long dataNanos) {
    this.steps = steps;
    this.skipped = skipped;
    this.wallNanos = wallNanos;
    this.crew = crew;
    List<Part> all = new ArrayList<>();
    long backend = 0;
    for (TimedBackend.OpTime op : ops) {
      all.add(new Part(op.op(), op.calls(), op.nanos(), op.flops(), op.slices()));
      backend += op.nanos();
    }
    if (crew != null) {
      all.add(new Part(CREW_STEP, crew.steps(), crew.stepNanos(), 0));
      backend += crew.stepNanos();
    }
    this.backendNanos = backend;
    all.add(new Part(OPTIMIZER, optimizerCalls, optimizerNanos, 0));
    all.add(new Part(DATA, steps, dataNanos, 0));
    all.add(new Part(OTHER, steps, wallNanos - backend - optimizerNanos - dataNanos, 0));
    // Longest first; a stable sort keeps first-run order among equals.
    all.sort(Comparator.comparingLong(Part::nanos).reversed());
    this.parts = List.copyOf(all);
  }

  /** Every part, longest first; they add up to the steps' wall time. */
  public List<Part> parts() {
    return parts;
  }

  /** The total first, then one line per part, longest first. */
  public List<String> lines() {
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "profile single process: %d steps%s, %.3f ms per step = backend operations"
        + " %s + %s %s + %s %s + %s %s", steps, skipped > 0 ? " after the first " + skipped : "",
        millisPerStep(wallNanos), figure(backendNanos), OPTIMIZER,
        figure(part(OPTIMIZER).nanos()), DATA, figure(part(DATA).nanos()), OTHER, figure(part(OTHER).nanos())));
    for (Part p : parts) {
      StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "profile   %s: %.3f ms (%.1f%%)", p.name(),
          millisPerStep(p.nanos()), 100 * share(p.nanos())));
      if (!p.name().equals(OTHER)) sb.append(", ").append(calls(p.calls()));
      if (p.flops() > 0) sb.append(String.format(Locale.ROOT, ", %.1f GFLOP/s", gflops(p)));
      TimedBackend.Slices s = p.slices();
      if (s != null) {
        sb.append(String.format(Locale.ROOT, "; in parallel: %s runs per step, caller %.3f ms, workers %.3f ms,"
            + " hand-offs %.3f ms, caller waited %.3f ms", perStep(s.runs()), millisPerStep(s.callerNanos()),
            millisPerStep(s.workerNanos()), millisPerStep(s.handoffNanos()), millisPerStep(s.waitNanos())));
      }
      lines.add(sb.toString());
    }
    if (crew != null) {
      for (int t = 0; t < crew.nanos().length; t++) {
        StringBuilder sb = new StringBuilder("profile   crew step, thread " + t + ", ms per step:");
        String sep = " ";
        for (CrewStep.Phase phase : CrewStep.Phase.values()) {
          sb.append(sep).append(phaseName(phase))
              .append(String.format(Locale.ROOT, " %.3f", millisPerStep(crew.nanos(t, phase))));
          sep = ", ";
        }
        sb.append(String.format(Locale.ROOT, "; of its waits, %d stalls of %.1f ms or more, %.3f ms per step",
            crew.stalls()[t], CrewStep.STALL_NANOS / 1e6, millisPerStep(crew.stallNanos()[t])));
        lines.add(sb.toString());
      }
    }
    return lines;
  }

  private static String phaseName(CrewStep.Phase phase) {
    return phase.name().toLowerCase(Locale.ROOT);
  }

  /** The report's {@code profile} object. */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("scope", SCOPE);
    m.put("other_includes", OTHER_INCLUDES);
    m.put("steps", steps);
    m.put("skipped_steps", skipped);
    m.put("wall_ns", wallNanos);
    m.put("ms_per_step", millisPerStep(wallNanos));
    m.put("backend_ms_per_step", millisPerStep(backendNanos));
    List<Object> list = new ArrayList<>();
    for (Part p : parts) {
      Map<String, Object> o = new LinkedHashMap<>();
      o.put("op", p.name());
      o.put("calls", p.calls());
      o.put("ns", p.nanos());
      o.put("ms_per_step", millisPerStep(p.nanos()));
      o.put("share", share(p.nanos()));
      if (p.flops() > 0) o.put("gflops", gflops(p));
      TimedBackend.Slices s = p.slices();
      if (s != null) {
        Map<String, Object> par = new LinkedHashMap<>();
        par.put("runs_per_step", steps == 0 ? 0 : (double) s.runs() / steps);
        par.put("caller_ms_per_step", millisPerStep(s.callerNanos()));
        par.put("workers_ms_per_step", millisPerStep(s.workerNanos()));
        par.put("handoffs_ms_per_step", millisPerStep(s.handoffNanos()));
        par.put("caller_waited_ms_per_step", millisPerStep(s.waitNanos()));
        o.put("parallel", par);
      }
      list.add(o);
    }
    m.put("ops", list);
    if (crew != null) {
      List<Object> threads = new ArrayList<>();
      for (int t = 0; t < crew.nanos().length; t++) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("thread", t);
        for (CrewStep.Phase phase : CrewStep.Phase.values()) {
          o.put(phaseName(phase) + "_ms_per_step", millisPerStep(crew.nanos(t, phase)));
        }
        o.put("stalls", crew.stalls()[t]);
        o.put("stalls_ms_per_step", millisPerStep(crew.stallNanos()[t]));
        threads.add(o);
      }
      m.put("crew_step_threads", threads);
    }
    return m;
  }

  private Part part(String name) {
    return parts.stream().filter(p -> p.name().equals(name)).findFirst().orElseThrow();
  }

  private String figure(long nanos) {
    return String.format(Locale.ROOT, "%.3f (%.1f%%)", millisPerStep(nanos), 100 * share(nanos));
  }

  /** Calls per step; an operation rarer than one call in a hundred steps (a short last batch's shapes) as its count. */
  private String calls(long calls) {
    if (calls * 100 < steps) return calls + (calls == 1 ? " call in " : " calls in ") + steps + " steps";
    String n = perStep(calls);
    return n + (n.equals("1") ? " call" : " calls") + " per step";
  }

  /** {@code count} over the steps: whole when it divides, else to two places. */
  private String perStep(long count) {
    return count % Math.max(1, steps) == 0 ? String.valueOf(count / Math.max(1, steps))
        : String.format(Locale.ROOT, "%.2f", (double) count / steps);
  }


  private double millisPerStep(long nanos) {
    return steps == 0 ? 0 : nanos / 1e6 / steps;
  }

  private double share(long nanos) {
    return wallNanos == 0 ? 0 : (double) nanos / wallNanos;
  }

  private static double gflops(Part p) {
    return p.nanos() == 0 ? 0 : (double) p.flops() / p.nanos();
  }
}
