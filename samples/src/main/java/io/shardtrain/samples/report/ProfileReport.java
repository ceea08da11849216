package io.shardtrain.samples.report;

import io.shardtrain.actors.trainer.StepProfile;
import io.shardtrain.actors.trainer.StepProfile.Part;
import io.shardtrain.actors.transport.WireTimings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code --profile} shows of a local cluster run: where each trainer's step time went
 * ({@link StepProfile}) and, apart from that split, the serialization time of the whole cluster
 * ({@link WireTimings}), as printed lines and as the report's {@code profile} object. Times in the
 * report are whole nanoseconds, so the parts add up exactly; means per step are milliseconds.
 */
public final class ProfileReport {
  private static final String SCOPE = "process-wide: every node of the local cluster, every thread, while the"
      + " trainers ran; not one trainer's and not part of the split (it overlaps compute and the waits)";

  private final Map<String, StepProfile> trainers;
  private final Map<WireTimings.Kind, WireTimings.Figure> wire;

  /** {@code trainers}: each trainer's profile, by id, in the order to show them. */
  public ProfileReport(Map<String, StepProfile> trainers, Map<WireTimings.Kind, WireTimings.Figure> wire) {
    this.trainers = trainers;
    this.wire = wire;
  }

  /** Every trainer's steps, wall times and parts added. */
  public StepProfile total() {
    StepProfile t = StepProfile.EMPTY;
    for (StepProfile p : trainers.values()) t = t.plus(p);
    return t;
  }

  /** One line per trainer, one for all of them, and one for serialization. */
  public List<String> lines() {
    List<String> lines = new ArrayList<>();
    trainers.forEach((id, p) -> lines.add(line(id, p)));
    lines.add(line("all trainers", total()));
    lines.add(wireLine());
    return lines;
  }

  private static String line(String who, StepProfile p) {
    StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "profile %s: %d steps, %.3f ms per step =",
        who, p.steps(), p.wallMillisPerStep()));
    for (Part part : Part.values()) {
      sb.append(String.format(Locale.ROOT, "%s %s %.3f (%.1f%%", part == Part.COMPUTE ? "" : " +",
          name(part).replace('_', ' '), p.millisPerStep(part), 100 * p.share(part)));
      if (part == Part.COMPUTE) sb.append(String.format(Locale.ROOT, ", %.3f on CPU", p.computeCpuMillisPerStep()));
      sb.append(')');
    }
    return sb.toString();
  }

  private String wireLine() {
    long steps = total().steps();
    StringBuilder sb = new StringBuilder("profile serialization (process-wide, all nodes):");
    long nanos = 0;
    for (WireTimings.Kind k : WireTimings.Kind.values()) {
      WireTimings.Figure f = wire.getOrDefault(k, new WireTimings.Figure(0, 0));
      nanos += f.nanos();
      sb.append(String.format(Locale.ROOT, " %s %.1f ms in %d calls,", name(k).replace('_', ' '), f.nanos() / 1e6,
          f.calls()));
    }
    sb.append(String.format(Locale.ROOT, " %.3f ms per trainer step", steps == 0 ? 0 : nanos / 1e6 / steps));
    return sb.toString();
  }

  /** The report's {@code profile} object. */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("compute_includes", "the next step's forward layers that ran while a step waited for its pulls, taken out"
        + " of the push or pull wait they ran in");
    m.put("pull_wait_from", "the last push acknowledged (each pull leaves right behind its block's push, so pulls"
        + " are in flight during backward and the push wait too)");
    List<Object> list = new ArrayList<>();
    trainers.forEach((id, p) -> {
      Map<String, Object> t = new LinkedHashMap<>();
      t.put("trainer", id);
      t.putAll(json(p));
      list.add(t);
    });
    m.put("trainers", list);
    m.put("total", json(total()));
    m.put("serialization", wireJson());
    return m;
  }

  private static Map<String, Object> json(StepProfile p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("steps", p.steps());
    m.put("wall_ns", p.wallNanos());
    for (Part part : Part.values()) m.put(name(part) + "_ns", p.nanos(part));
    // Of compute, not a part of its own.
    m.put("compute_cpu_ns", p.computeCpuNanos());
    Map<String, Object> perStep = new LinkedHashMap<>();
    perStep.put("wall", p.wallMillisPerStep());
    for (Part part : Part.values()) perStep.put(name(part), p.millisPerStep(part));
    perStep.put("compute_cpu", p.computeCpuMillisPerStep());
    m.put("ms_per_step", perStep);
    Map<String, Object> shares = new LinkedHashMap<>();
    for (Part part : Part.values()) shares.put(name(part), p.share(part));
    m.put("share_of_wall", shares);
    return m;
  }

  private Map<String, Object> wireJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("scope", SCOPE);
    long nanos = 0;
    for (WireTimings.Kind k : WireTimings.Kind.values()) {
      WireTimings.Figure f = wire.getOrDefault(k, new WireTimings.Figure(0, 0));
      nanos += f.nanos();
      m.put(name(k) + "_ns", f.nanos());
      m.put(name(k) + "_calls", f.calls());
    }
    long steps = total().steps();
    m.put("ms_per_trainer_step", steps == 0 ? 0.0 : nanos / 1e6 / steps);
    return m;
  }

  private static String name(Part part) {
    return part.name().toLowerCase(Locale.ROOT);
  }

  private static String name(WireTimings.Kind k) {
    return k.name().toLowerCase(Locale.ROOT);
  }
}
