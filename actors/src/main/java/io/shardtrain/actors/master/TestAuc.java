package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol.AucShareLease;
import io.shardtrain.actors.job.JobProtocol.ReportAuc;
import io.shardtrain.actors.job.JobSpec;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;

/**
 * A click-through job's test AUC: the test set is cut into one share per planned trainer; trainers
 * that finished the job lease shares ({@link #lease}), predict them and send their histograms
 * ({@link ReportAuc}), merged once every share is in. A share leased and not reported within
 * {@code leaseNanos} (its trainer died) is leased again to whoever asks. Not journaled: a master
 * that moves forgets the shares, and its status says NaN.
 */
final class TestAuc {
  private final Logger log;
  private final long leaseNanos;
  private AucShares shares;
  /** Shares leased and not reported yet: when each was leased. */
  private final Map<Integer, Long> leased = new HashMap<>();

  TestAuc(Logger log, long leaseNanos) {
    this.log = log;
    this.leaseNanos = leaseNanos;
  }

  /** The share for {@code trainerId} to predict now; share -1 when none is left (or no click-through job runs). */
  AucShareLease lease(JobSpec job, String trainerId, long now) {
    if (job == null || job.ctr() == null) return new AucShareLease(-1, 0);
    int of = job.trainers();
    for (int k = 0; k < of; k++) {
      if (shares != null && shares.has(key(k))) continue;
      Long at = leased.get(k);
      if (at != null && now - at < leaseNanos) continue;
      leased.put(k, now);
      return new AucShareLease(k, of);
    }
    return new AucShareLease(-1, of);
  }

  void add(JobSpec job, ReportAuc share) {
    if (job == null || job.ctr() == null) {
      log.warn("AUC share of trainer {} ignored: no click-through job is running", share.trainerId());
      return;
    }
    if (share.share() < 0 || share.share() >= job.trainers()) {
      log.warn("AUC share {} of trainer {} refused: the job's test set has shares 0 to {}", share.share(),
          share.trainerId(), job.trainers() - 1);
      return;
    }
    if (shares == null) shares = new AucShares(0, job.trainers(), job.ctr().aucBins());
    try {
      leased.remove(share.share());
      if (shares.add(key(share.share()), share.positives(), share.negatives())) {
        log.info("job {}: test AUC {} over {} examples", job.jobId(), shares.auc(), shares.examples());
      }
    } catch (IllegalArgumentException e) {
      log.warn("AUC share of trainer {} refused: {}", share.trainerId(), e.getMessage());
    }
  }

  /** The merged AUC, NaN until every share is in. */
  double auc() {
    return shares != null && shares.complete() ? shares.auc() : Double.NaN;
  }

  long examples() {
    return shares == null ? 0 : shares.examples();
  }

  private static String key(int share) {
    return "share-" + share;
  }
}
