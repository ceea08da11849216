package io.shardtrain.actors.master;

import io.shardtrain.compute.metrics.AucHistogram;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The global test AUC of one evaluation: each trainer (or evaluator) of {@code expected} fills an
 * {@link AucHistogram} on its share of the test set and sends its counts; the merge of all shares
 * is the histogram one process would have filled with every prediction, so the AUC is of the whole
 * set however unevenly it was split. A share sent again (a retry) replaces the earlier one instead
 * of counting twice; a share from outside {@code expected} is refused. Or, where the senders are not
 * known ahead, complete once {@code expectedCount} senders sent theirs. Plain state, for the master.
 */
public final class AucShares {
  private final long evaluation;
  private final Set<String> expected;
  private final int expectedCount;
  private final int bins;
  private final Map<String, AucHistogram> shares = new HashMap<>();

  public AucShares(long evaluation, Set<String> expected, int bins) {
    if (expected.isEmpty()) throw new IllegalArgumentException("evaluation " + evaluation + " expects no shares");
    this.evaluation = evaluation;
    this.expected = Set.copyOf(expected);
    this.expectedCount = expected.size();
    this.bins = bins;
  }

  /** Shares of {@code expectedCount} senders, whoever they are. */
  public AucShares(long evaluation, int expectedCount, int bins) {
    if (expectedCount < 1) throw new IllegalArgumentException("evaluation " + evaluation + " expects no shares");
    this.evaluation = evaluation;
    this.expected = null;
    this.expectedCount = expectedCount;
    this.bins = bins;
  }

  /** Takes {@code from}'s share of this evaluation; true once every expected share is in. */
  public boolean add(String from, long[] positives, long[] negatives) {
    if (expected != null && !expected.contains(from)) {
      throw new IllegalArgumentException("evaluation " + evaluation + " expects shares from " + expected
          + ", not from " + from);
    }
    AucHistogram share = AucHistogram.of(positives, negatives);
    if (share.bins() != bins) {
      throw new IllegalArgumentException(from + "'s share of evaluation " + evaluation + " has " + share.bins()
          + " bins, not " + bins);
    }
    shares.put(from, share);
    return complete();
  }

  /** Whether {@code from}'s share is in. */
  public boolean has(String from) {
    return shares.containsKey(from);
  }

  public boolean complete() {
    return shares.size() >= expectedCount;
  }

  /** Examples counted so far, over all shares. */
  public long examples() {
    long n = 0;
    for (AucHistogram h : shares.values()) n += h.count();
    return n;
  }

  /** The AUC of every share merged; only once {@link #complete()}. */
  public double auc() {
    if (!complete()) {
      throw new IllegalStateException("evaluation " + evaluation + " has " + shares.size() + " of "
          + expectedCount + " shares");
    }
    AucHistogram all = new AucHistogram(bins);
    for (AucHistogram h : shares.values()) all.merge(h);
    return all.auc();
  }
}
