package io.shardtrain.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.job.CtrModel;
import io.shardtrain.actors.job.JobProtocol.AucShareLease;
import io.shardtrain.actors.job.JobProtocol.ReportAuc;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.compute.metrics.AucHistogram;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class TestAucTest {
  private static final long LEASE = 1_000;
  private static final JobSpec JOB = new JobSpec("job", "ctr", 100, 13, 2, List.of(), "relu", 7, BlockSpec.Mode.SYNC, 3,
      10, 1, 0, "adagrad", 0.05f, "constant", 0f, -1, 64, List.of("fm.dense#0"),
      new CtrModel(26, 13, 8, 1024, 2, 0.5f, 0.1f, 0.01f, 4, 0));

  private final TestAuc auc = new TestAuc(LoggerFactory.getLogger(TestAucTest.class), LEASE);

  @Test
  void sharesAreLeasedOncePerPlannedTrainerAndAShareNotReportedInTimeGoesToTheNextAsker() {
    assertEquals(new AucShareLease(0, 3), auc.lease(JOB, "a", 0));
    assertEquals(new AucShareLease(1, 3), auc.lease(JOB, "b", 10));
    assertEquals(new AucShareLease(2, 3), auc.lease(JOB, "a", 20));
    assertEquals(new AucShareLease(-1, 3), auc.lease(JOB, "c", 30), "all leased, none expired");
    auc.add(JOB, share("a", 0, new float[] {0.9f, 0.2f}, new float[] {1, 0}));
    // b died with share 1: after the lease time it goes to c; share 0 is in and never leased again.
    assertEquals(new AucShareLease(1, 3), auc.lease(JOB, "c", 10 + LEASE));
    assertEquals(new AucShareLease(2, 3), auc.lease(JOB, "c", 20 + LEASE));
    assertEquals(new AucShareLease(-1, 3), auc.lease(JOB, "c", 20 + LEASE));
  }

  @Test
  void theAucIsNaNUntilEveryShareIsInThenThatOfAllPredictionsAndAResentShareCountsOnce() {
    auc.add(JOB, share("a", 0, new float[] {0.9f, 0.2f}, new float[] {1, 0}));
    auc.add(JOB, share("b", 1, new float[] {0.4f}, new float[] {1}));
    assertTrue(Double.isNaN(auc.auc()));
    auc.add(JOB, share("b", 1, new float[] {0.4f}, new float[] {1}));
    assertEquals(3, auc.examples(), "a share sent twice counts once");
    auc.add(JOB, share("c", 2, new float[] {0.6f, 0.1f}, new float[] {0, 0}));
    auc.add(JOB, share("c", 3, new float[] {0.99f}, new float[] {0}));
    // Positives 0.9, 0.4; negatives 0.2, 0.6, 0.1: 5 of 6 pairs ordered right. Share 3 does not exist.
    assertEquals(5.0 / 6, auc.auc(), 1e-9);
    assertEquals(5, auc.examples());
  }

  private static ReportAuc share(String trainer, int share, float[] scores, float[] labels) {
    AucHistogram h = new AucHistogram(4);
    h.add(scores, labels);
    return new ReportAuc(trainer, share, 10, h.positives(), h.negatives());
  }
}
