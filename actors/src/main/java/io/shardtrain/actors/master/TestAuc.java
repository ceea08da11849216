package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol.ReportAuc;
import io.shardtrain.actors.job.JobSpec;
import org.slf4j.Logger;

/**
 * A click-through job's test AUC: the shares its trainers send as they finish
 * ({@link ReportAuc}), merged once one share per planned trainer is in. Not journaled: a master
 * that moves forgets the shares, and its status says NaN until they are sent again.
 */
final class TestAuc {
  private final Logger log;
  private AucShares shares;

  TestAuc(Logger log) {
    this.log = log;
  }

  void add(JobSpec job, ReportAuc share) {
    if (job == null || job.ctr() == null) {
      log.warn("AUC share of trainer {} ignored: no click-through job is running", share.trainerId());
      return;
    }
    if (shares == null) shares = new AucShares(0, job.trainers(), job.ctr().aucBins());
    try {
      if (shares.add(share.trainerId(), share.positives(), share.negatives())) {
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
}
