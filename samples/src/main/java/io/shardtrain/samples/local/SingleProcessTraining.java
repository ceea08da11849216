package io.shardtrain.samples.local;

import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.compute.ColumnFill;
import io.shardtrain.compute.RowSlices;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.TimedBackend;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import io.shardtrain.compute.data.Dataset;
import io.shardtrain.compute.data.ReaderPosition;
import io.shardtrain.compute.metrics.Accuracy;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.Optimizer;
import io.shardtrain.compute.optim.OptimizerSpec;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.samples.report.MetricsLog;
import io.shardtrain.samples.report.OpProfileReport;
import io.shardtrain.samples.report.ProgressBar;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Trains an MLP classifier in this process, on one backend, without any actor: the baseline the
 * distributed modes are measured against, and the reference their parameters must equal in sync
 * mode. Throughput counts training steps, each from its batch's read to the optimizer's last update
 * (not start-up, the data set's loading or evaluation).
 *
 * <p>On a {@link TimedBackend} the run also profiles its steps: each step from reading its batch
 * to the optimizer's last update, split into the backend's operations (counted during forward and
 * backward only, so evaluation stays out) or, for a step its threads run together, the crew's
 * phases (a crew step's threads copying the batch's columns they read among them), the optimizer,
 * the batch read, and the rest.
 */
public final class SingleProcessTraining {

  /** Test-set evaluation after some step. */
  public record Evaluation(long step, int epoch, double testAccuracy, double trainLoss) {}

  /** What a run produced; {@code profile}: null unless the backend was a {@link TimedBackend}. */
  public record Result(long steps, int epochs, long samples, double trainSeconds, double wallSeconds,
      double finalLoss, double testAccuracy, List<Evaluation> evaluations, Mlp model, OpProfileReport profile) {
    public double samplesPerSec() {
      return trainSeconds > 0 ? samples / trainSeconds : 0;
    }
  }

  private final TrainSettings settings;
  private final Backend backend;
  private final ProgressBar progress;
  private final MetricsLog metrics;
  private final long profileSkip;

  public SingleProcessTraining(TrainSettings settings, Backend backend, ProgressBar progress, MetricsLog metrics) {
    this(settings, backend, progress, metrics, 0);
  }

  /**
   * As above; on a {@link TimedBackend} the profile leaves the first {@code profileSkip} steps out
   * (while the JIT compiles the step's code, for its first thousands of steps, they run slower).
   */
  public SingleProcessTraining(TrainSettings settings, Backend backend, ProgressBar progress, MetricsLog metrics,
      long profileSkip) {
    if (profileSkip < 0) throw new IllegalArgumentException("steps left out of the profile: " + profileSkip);
    this.settings = settings;
    this.backend = backend;
    this.progress = progress;
    this.metrics = metrics;
    this.profileSkip = profileSkip;
  }

  public Result run(Dataset train, Dataset test) {
    long wallStart = System.nanoTime();
    if (settings.resumeFrom() != null) {
      throw new IllegalArgumentException("resume-from continues a sync job of a cluster; a single-process run does"
          + " not resume (run local with --ps and --trainers, or init-from the checkpoint's values)");
    }
    if (train.numClasses() < 2) {
      throw new IllegalArgumentException("data set '" + settings.dataset() + "' has no class labels");
    }
    Mlp model = Mlp.create(backend, train.dim(), settings.hidden(), train.numClasses(),
        Activation.parse(settings.activation()), settings.initialization(), settings.seed());
    if (settings.initFrom() != null) io.shardtrain.actors.job.SavedModels.initFrom(settings.initFrom(), model);
    Optimizer optimizer = OptimizerSpec.parse(settings.optimizer())
        .withWeightDecay((float) settings.weightDecay()).create();
    List<Parameter> params = model.parameters();
    List<OptimizerState> states = new ArrayList<>();
    for (Parameter p : params) states.add(OptimizerState.create(optimizer, p.size()));

    int batch = settings.batch();
    long totalSteps = settings.stepsPerTrainer(train.size(), 1);
    if (backend instanceof TimedBackend && profileSkip >= totalSteps) {
      throw new IllegalArgumentException("leaving the first " + profileSkip + " steps out of the profile leaves none"
          + " of the run's " + totalSteps + " to profile");
    }
    LearningRateSchedule schedule = LearningRateSchedule.parse(settings.lrScheduleFor(totalSteps), (float) settings.lr());
    BatchReader reader = new BatchReader(train, batch, settings.seed(), true, new ReaderPosition(0, 0));
    Tensor full = Tensor.zeros(batch, train.dim());
    Tensor x;
    List<Evaluation> evaluations = new ArrayList<>();
    long trainNanos = 0;
    long samples = 0;
    double lossEma = Double.NaN;
    int epoch = 0;
    RowSlices rowSlices = backend::forEachRowSlice;
    TimedBackend timed = backend instanceof TimedBackend t ? t : null;
    if (timed != null) timed.recording(false);
    long profileNanos = 0, dataNanos = 0, optimizerNanos = 0;
    FeatureCopy copy = new FeatureCopy(train);
    // Forward and backward run where the backend keeps the model (resident on a GPU); the
    // optimizer runs here, on the host values that the step uploads again each time.
    try (GradientStep gradientStep = GradientStep.of(model, batch)) {
      for (long step = 1; step <= totalSteps; step++) {
        boolean profiled = timed != null && step > profileSkip;
        // A step starts with its batch's read, as the PyTorch reference's timed loop does; without a profile,
        // only the two clock reads samples/s needs.
        long t0 = System.nanoTime();
        Batch b = reader.nextUnread();
        // The step copies the features into the model's input, a full batch into one tensor for all steps,
        // a short one into its own: a step run by several threads has each copy the columns it reads.
        x = b.size() == batch ? full : Tensor.zeros(b.size(), train.dim());
        copy.next(b, x);
        long tCopied = 0, copiedWhole = copy.wholeNanos;
        if (profiled) {
          tCopied = System.nanoTime();
          timed.recording(true);
        }
        float loss = gradientStep.forwardBackward(x, copy, b.labels(), p -> { });
        if (!Float.isFinite(loss)) {
          throw new IllegalStateException("training diverged at step " + step + " (loss " + loss
              + "); lower --lr (now " + settings.lr() + ")"
              + (settings.lrSchedule().equals("constant") ? ""
                  : " or change --lr-schedule (now " + settings.lrSchedule() + ")")
              + (settings.weightDecay() == 0 ? "" : " or --weight-decay (now " + settings.weightDecay() + ")"));
        }
        long tOptimizer = 0;
        if (profiled) {
          timed.recording(false);
          tOptimizer = System.nanoTime();
        }
        for (int i = 0; i < params.size(); i++) {
          // In the row slices of the weight gradient's product: each thread updates the rows it computed.
          Parameter p = params.get(i);
          OptimizerState state = states.get(i);
          state.step(optimizer, schedule.rate(state.updates()), p.value().data(), p.grad().data(), p.value().cols(),
              rowSlices);
        }
        long tEnd = System.nanoTime();
        trainNanos += tEnd - t0;
        if (profiled) {
          profileNanos += tEnd - t0;
          dataNanos += tCopied - t0 + copy.wholeNanos - copiedWhole;
          optimizerNanos += tEnd - tOptimizer;
        }
        samples += b.size();
        metrics.step(trainNanos / 1e9, "trainer-1", step, b.size(), loss);
        lossEma = Double.isNaN(lossEma) ? loss : 0.98 * lossEma + 0.02 * loss;
        progress.update(step, samples / (trainNanos / 1e9), lossEma);
        // The reader stays at (e, epochLength) after an epoch's last batch, until the next call.
        boolean epochEnd = reader.epochDone();
        if (epochEnd) epoch++;
        boolean periodic = settings.evalEvery() > 0 && step % settings.evalEvery() == 0;
        if (epochEnd || periodic || step == totalSteps) {
          double acc = evaluate(model, test);
          evaluations.add(new Evaluation(step, epoch, acc, lossEma));
          metrics.evaluation(trainNanos / 1e9, step, acc);
          progress.message(String.format(Locale.ROOT, "step %d  epoch %d  loss %.4f  test accuracy %.4f",
              step, epoch, lossEma, acc));
        }
      }
    }
    progress.finish();
    double finalAcc = evaluations.isEmpty() ? evaluate(model, test) : evaluations.get(evaluations.size() - 1).testAccuracy();
    long profiledSteps = totalSteps - profileSkip;
    OpProfileReport profile = timed == null ? null : new OpProfileReport(profiledSteps, profileSkip, profileNanos,
        timed.snapshot(), timed.crewPhases(), profiledSteps * params.size(), optimizerNanos, dataNanos);
    return new Result(totalSteps, epoch, samples, trainNanos / 1e9, (System.nanoTime() - wallStart) / 1e9,
        lossEma, finalAcc, evaluations, model, profile);
  }

  /**
   * Copies a batch's features from the data set into the step's input, columns at a time; counts
   * the time of whole copies, which one thread makes outside a crew step's phases (the profile's data).
   */
  private static final class FeatureCopy implements ColumnFill {
    private final Dataset data;
    private Batch batch;
    private Tensor x;
    long wholeNanos;

    FeatureCopy(Dataset data) {
      this.data = data;
    }

    void next(Batch batch, Tensor x) {
      this.batch = batch;
      this.x = x;
    }

    @Override
    public void columns(int from, int to) {
      boolean whole = from == 0 && to == data.dim();
      long start = whole ? System.nanoTime() : 0;
      data.copyFeatureColumns(batch.indices(), 0, batch.size(), from, to, x.data());
      if (whole) wholeNanos += System.nanoTime() - start;
    }
  }

  /** Accuracy of {@code model} on {@code data}, in batches of 1000. */
  public static double evaluate(Mlp model, Dataset data) {
    int chunk = 1000;
    int correct = 0;
    float[] buf = new float[chunk * data.dim()];
    for (int from = 0; from < data.size(); from += chunk) {
      int n = Math.min(chunk, data.size() - from);
      int[] idx = new int[n];
      for (int i = 0; i < n; i++) idx[i] = from + i;
      data.copyFeatures(idx, 0, n, buf);
      Tensor x = Tensor.wrap(n == chunk ? buf : java.util.Arrays.copyOf(buf, n * data.dim()), n, data.dim());
      int[] predicted = model.predict(x);
      int[] labels = new int[n];
      for (int i = 0; i < n; i++) labels[i] = data.label(from + i);
      correct += Math.round(Accuracy.of(predicted, labels) * n);
    }
    return (double) correct / data.size();
  }
}
