package io.shardtrain.actors.master;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One optimizer-update count and one example count per parameter, from the captures of its blocks.
 * The blocks of one parameter can disagree. A trainer that resumes a departed trainer's task pushes
 * nothing to the blocks that hold a batch of it already (they applied it within one update, the
 * others apply it as one more), and a block whose every gradient of a step was non-finite skips
 * the step. The checkpoint keeps the largest of each count: the blocks that had fewer resume with
 * their Adam bias correction and schedule position that many updates further on, where refusing
 * would refuse every checkpoint for the rest of the job, since the counts never meet again.
 */
final class ParameterCounts {
  private final Map<String, long[]> ranges = new LinkedHashMap<>();

  /** Adds one block's counts for {@code parameter}. */
  void add(String parameter, long updates, long examples) {
    long[] r = ranges.get(parameter);
    if (r == null) {
      ranges.put(parameter, new long[] {updates, updates, examples, examples});
      return;
    }
    r[0] = Math.min(r[0], updates);
    r[1] = Math.max(r[1], updates);
    r[2] = Math.min(r[2], examples);
    r[3] = Math.max(r[3], examples);
  }

  /** The most optimizer updates a block of {@code parameter} applied. */
  long updates(String parameter) {
    return range(parameter)[1];
  }

  /** The most examples a block of {@code parameter} applied. */
  long examples(String parameter) {
    return range(parameter)[3];
  }

  /** Each parameter whose blocks disagree, with the spread of both counts ("p: updates 9 to 10, examples 72 to 80"). */
  List<String> disagreements() {
    List<String> out = new ArrayList<>();
    ranges.forEach((p, r) -> {
      if (r[0] != r[1] || r[2] != r[3]) {
        out.add(p + ": updates " + r[0] + " to " + r[1] + ", examples " + r[2] + " to " + r[3]);
      }
    });
    return out;
  }

  private long[] range(String parameter) {
    long[] r = ranges.get(parameter);
    if (r == null) throw new IllegalStateException("no block of parameter " + parameter + " answered");
    return r;
  }
}
