package io.shardtrain.samples.local;

import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.CtrModel;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.job.SavedModels;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.CtrDataset;
import io.shardtrain.compute.data.ReaderPosition;
import io.shardtrain.compute.metrics.Auc;
import io.shardtrain.compute.metrics.AucHistogram;
import io.shardtrain.compute.metrics.LogLoss;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.nn.FmBatch;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.compute.sparse.BatchRows;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.compute.sparse.SparseTable;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.persistence.model.TableValues;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.ProgressBar;
import java.util.Locale;

/**
 * Trains a factorization machine on click-through data in this process, without actors: its id
 * rows in a {@link SparseTable} (created when first updated, AdaGrad per row), its dense part in
 * one array under the job's optimizer. The reference the distributed modes are measured against.
 * Throughput counts training steps, each from its batch's read (not the data's generation or
 * evaluation); the test AUC comes from an {@link AucHistogram}, as the distributed modes merge it,
 * and is checked against the exact sort-based AUC.
 */
public final class CtrTraining {

  /**
   * What a run produced; {@code distinctRowsPerExample}: the rows a step reads and updates, per
   * example; {@code table} and {@code dense}: the trained model.
   */
  public record Result(long steps, long samples, double trainSeconds, double wallSeconds, double finalLoss,
      double testAuc, double testAucExact, double testLogLoss, double distinctRowsPerExample, long tableRows,
      SparseTable table, float[] dense) {
    public double samplesPerSec() {
      return trainSeconds > 0 ? samples / trainSeconds : 0;
    }
  }

  /** A test-set evaluation: histogram AUC, exact AUC, mean log loss. */
  public record Evaluation(double auc, double exactAuc, double logLoss) {}

  private final TrainSettings settings;
  private final CtrSettings ctr;
  private final ProgressBar progress;
  private final MetricsLog metrics;

  public CtrTraining(TrainSettings settings, CtrSettings ctr, ProgressBar progress, MetricsLog metrics) {
    this.settings = settings;
    this.ctr = ctr;
    this.progress = progress;
    this.metrics = metrics;
  }

  /** The click-through model of a single process on {@code train}: one table shard. */
  public static CtrModel model(CtrDataset train, CtrSettings ctr) {
    return new CtrModel(train.fields(), train.denseDim(), ctr.factors(), train.hashSpace(), 1, (float) ctr.rowLr(),
        (float) ctr.rowInitialAccumulator(), (float) ctr.initStd(), ctr.aucBins(), train.fingerprint());
  }

  /** The sparse table a job's id rows live in, as its settings describe it. */
  public static SparseTable table(FactorizationMachine fm, CtrSettings ctr, long seed) {
    return new SparseTable(fm.rowWidth(), new RowInit(RowInit.Kind.NORMAL, (float) ctr.initStd(), seed),
        RowOptimizer.adagrad((float) ctr.rowLr(), (float) ctr.rowInitialAccumulator()), 1, 1, 1, 0);
  }

  public Result run(CtrDataset train, CtrDataset test) {
    long wallStart = System.nanoTime();
    FactorizationMachine fm = new FactorizationMachine(train.fields(), train.denseDim(), ctr.factors());
    SparseTable table = table(fm, ctr, settings.seed());
    float[] dense = fm.initialDense((float) ctr.initStd(), settings.seed());
    if (settings.initFrom() != null) dense = initFrom(settings.initFrom(), train, table);
    float[] denseGrad = new float[dense.length];
    Optimizer optimizer = OptimizerSpec.parse(settings.optimizer()).withWeightDecay((float) settings.weightDecay()).create();
    OptimizerState denseState = OptimizerState.create(optimizer, dense.length);
    int batch = settings.batch();
    long totalSteps = settings.stepsPerTrainer(train.size(), 1);
    LearningRateSchedule schedule = LearningRateSchedule.parse(settings.lrScheduleFor(totalSteps), (float) settings.lr());
    BatchReader reader = new BatchReader(train.asDataset(), batch, settings.seed(), true, new ReaderPosition(0, 0));
    FmBatch step = new FmBatch(fm);
    int[] ids = new int[batch * train.fields()];
    int w = fm.rowWidth();
    long trainNanos = 0;
    long samples = 0;
    long distinctRows = 0;
    double lossEma = Double.NaN;
    for (long s = 1; s <= totalSteps; s++) {
      long t0 = System.nanoTime();
      Batch b = reader.next();
      train.copyIds(b.indices(), 0, b.size(), ids);
      step.index(ids, b.size());
      BatchRows rows = step.rowIds();
      float[] values = step.rows();
      for (int u = 0; u < rows.distinctCount(); u++) table.read(rows.id(u), values, u * w);
      double loss = step.trainStep(b.features(), b.targets(), dense, denseGrad);
      if (!Double.isFinite(loss)) {
        throw new IllegalStateException("training diverged at step " + s + " (loss " + loss + "); lower --lr (now "
            + settings.lr() + ") or shardtrain.train.ctr.row-lr (now " + ctr.rowLr() + ")");
      }
      float[] grad = step.rowGrad();
      for (int u = 0; u < rows.distinctCount(); u++) table.apply(rows.id(u), grad, u * w, 1, s);
      denseState.step(optimizer, schedule, dense, denseGrad);
      trainNanos += System.nanoTime() - t0;
      samples += b.size();
      distinctRows += rows.distinctCount();
      metrics.step(trainNanos / 1e9, "trainer-1", s, b.size(), loss);
      lossEma = Double.isNaN(lossEma) ? loss : 0.98 * lossEma + 0.02 * loss;
      progress.update(s, samples / (trainNanos / 1e9), lossEma);
      boolean periodic = settings.evalEvery() > 0 && s % settings.evalEvery() == 0;
      if (periodic && s < totalSteps) {
        Evaluation e = evaluate(fm, table, dense, test, ctr.aucBins());
        metrics.aucEvaluation(trainNanos / 1e9, s, e.auc());
        progress.message(String.format(Locale.ROOT, "step %d  loss %.4f  test_auc %.4f", s, lossEma, e.auc()));
      }
    }
    Evaluation e = evaluate(fm, table, dense, test, ctr.aucBins());
    metrics.aucEvaluation(trainNanos / 1e9, totalSteps, e.auc());
    progress.message(String.format(Locale.ROOT, "step %d  loss %.4f  test_auc %.4f", totalSteps, lossEma, e.auc()));
    progress.finish();
    return new Result(totalSteps, samples, trainNanos / 1e9, (System.nanoTime() - wallStart) / 1e9, lossEma,
        e.auc(), e.exactAuc(), e.logLoss(), samples > 0 ? (double) distinctRows / samples : 0,
        table.store().size(), table, dense);
  }

  /**
   * Stores the saved model's rows in {@code table} (their optimizer slots at their initial values)
   * and returns its dense part, after checking its shape against this job's.
   */
  private float[] initFrom(java.nio.file.Path dir, CtrDataset train, SparseTable table) {
    ModelSnapshot saved = SavedModels.load(dir);
    model(train, ctr).checkSaved(saved, dir);
    TableValues rows = saved.table(CtrModel.ROWS);
    for (int r = 0; r < rows.rows(); r++) table.load(rows.ids()[r], rows.values(), r * rows.dim(), 0);
    return saved.parameter(JobSpec.CTR_DENSE).values().clone();
  }

  /** Predicts the whole test set in chunks of 4096: histogram and exact AUC, mean log loss. */
  public static Evaluation evaluate(FactorizationMachine fm, SparseTable table, float[] dense, CtrDataset test,
      int bins) {
    int chunk = 4096;
    int n = test.size();
    float[] probs = new float[n];
    FmBatch batch = new FmBatch(fm);
    int[] ids = new int[chunk * test.fields()];
    float[] x = new float[chunk * test.denseDim()];
    float[] out = new float[chunk];
    int w = fm.rowWidth();
    for (int from = 0; from < n; from += chunk) {
      int m = Math.min(chunk, n - from);
      System.arraycopy(test.ids(), from * test.fields(), ids, 0, m * test.fields());
      System.arraycopy(test.dense(), from * test.denseDim(), x, 0, m * test.denseDim());
      batch.index(ids, m);
      BatchRows rows = batch.rowIds();
      for (int u = 0; u < rows.distinctCount(); u++) table.read(rows.id(u), batch.rows(), u * w);
      batch.predict(x, dense, out);
      System.arraycopy(out, 0, probs, from, m);
    }
    AucHistogram h = new AucHistogram(bins);
    h.add(probs, test.labels());
    return new Evaluation(h.auc(), Auc.exact(probs, test.labels()), LogLoss.binary(probs, test.labels()));
  }
}
