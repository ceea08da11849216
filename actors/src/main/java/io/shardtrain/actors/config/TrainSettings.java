package io.shardtrain.actors.config;

import com.typesafe.config.Config;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Initialization;
import io.shardtrain.compute.optim.LearningRateSchedule;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * One training job's settings ({@code initFrom}: a saved model directory whose values the
 * trainable parameters start from, or null; {@code resumeFrom}: a checkpoint directory the job
 * continues from, or null), read once from {@code shardtrain.train}, {@code shardtrain.compute}
 * and {@code shardtrain.data-dir}; command-line flags are applied as a
 * configuration layer over the files before this is read. Values are checked here so a bad one fails before any data is loaded.
 */
public record TrainSettings(
    String dataset,
    int[] hidden,
    String activation,
    String init,
    String optimizer,
    double lr,
    String lrSchedule,
    double weightDecay,
    int batch,
    int epochs,
    long steps,
    long seed,
    long evalEvery,
    String backend,
    int computeThreads,
    Path dataDir,
    Path initFrom,
    Path resumeFrom) {

  public TrainSettings {
    if (batch < 1) throw new IllegalArgumentException("batch must be at least 1, got " + batch);
    if (epochs < 0) throw new IllegalArgumentException("epochs must not be negative, got " + epochs);
    if (steps < 0) throw new IllegalArgumentException("steps must not be negative, got " + steps);
    if (epochs == 0 && steps == 0) throw new IllegalArgumentException("either epochs or steps must be positive");
    if (!(lr > 0) || !Double.isFinite(lr)) throw new IllegalArgumentException("lr must be a positive number, got " + lr);
    if (weightDecay < 0) throw new IllegalArgumentException("weight-decay must not be negative, got " + weightDecay);
    if (computeThreads < 1) throw new IllegalArgumentException("compute threads must be at least 1, got " + computeThreads);
    if (evalEvery < 0) {
      throw new IllegalArgumentException("eval-every must not be negative (0: at each epoch's end), got " + evalEvery);
    }
    Activation.parse(activation);
    Initialization.parse(init);
    OptimizerSpec.parse(optimizer);
    // Bound to any length here: the job's own is known once its data is.
    LearningRateSchedule.parse(bound(lrSchedule, 1), (float) lr);
    for (int h : hidden) {
      if (h < 1) throw new IllegalArgumentException("hidden layer widths must be positive, got " + h);
    }
    if (initFrom != null && resumeFrom != null) {
      throw new IllegalArgumentException("init-from and resume-from exclude each other: a resumed job starts from"
          + " its checkpoint's values");
    }
    hidden = hidden.clone();
    dataset = datasetName(dataset);
  }

  /** How the MLP's layers start ({@code init}, checked above). */
  public Initialization initialization() {
    return Initialization.parse(init);
  }

  /**
   * A data set's name in lower case, as torchvision's {@code MNIST} names the same data; the path
   * of {@code criteo:PATH} keeps its case.
   */
  static String datasetName(String dataset) {
    int colon = dataset.indexOf(':');
    return colon < 0 ? dataset.toLowerCase(Locale.ROOT)
        : dataset.substring(0, colon).toLowerCase(Locale.ROOT) + dataset.substring(colon);
  }

  public static TrainSettings fromConfig(Config config) {
    Config t = config.getConfig("shardtrain.train");
    List<Integer> hidden = t.getIntList("hidden");
    return new TrainSettings(
        t.getString("dataset"),
        hidden.stream().mapToInt(Integer::intValue).toArray(),
        t.getString("activation"),
        t.getString("init"),
        t.getString("optimizer"),
        t.getDouble("lr"),
        t.getString("lr-schedule"),
        t.getDouble("weight-decay"),
        t.getInt("batch"),
        t.getInt("epochs"),
        t.getLong("steps"),
        t.getLong("seed"),
        t.getLong("eval-every"),
        config.getString("shardtrain.compute.backend"),
        config.getInt("shardtrain.compute.threads"),
        Path.of(config.getString("shardtrain.data-dir")),
        t.getString("init-from").isBlank() ? null : Path.of(t.getString("init-from")),
        t.getString("resume-from").isBlank() ? null : Path.of(t.getString("resume-from")));
  }

  /**
   * Steps each trainer takes: {@code steps} when set, else enough batches for {@code epochs} passes
   * over its share of {@code trainExamples} (one data task of {@code ceil(n / trainers)} per epoch).
   */
  public long stepsPerTrainer(int trainExamples, int trainers) {
    if (steps > 0) return steps;
    long share = (trainExamples + trainers - 1) / trainers;
    return (share + batch - 1) / batch * epochs;
  }

  /**
   * The learning-rate schedule spec with a bare {@code cosine} (no length) bound to the job's
   * length: {@code cosine} decays over {@code totalUpdates}, so the default schedule fits any job.
   */
  public String lrScheduleFor(long totalUpdates) {
    return bound(lrSchedule, totalUpdates);
  }

  private static String bound(String schedule, long totalUpdates) {
    return schedule.replaceAll("(^|,)cosine($|,)", "$1cosine:" + Math.max(1, totalUpdates) + "$2");
  }

  /** Parses "512,256" (or "" for no hidden layer); an empty width, as in "512,,256" or "512,", is refused. */
  public static int[] parseHidden(String spec) {
    if (spec.isBlank()) return new int[0];
    try {
      return java.util.Arrays.stream(spec.split(",", -1)).map(String::trim).mapToInt(Integer::parseInt).toArray();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("hidden must be comma-separated widths like 512,256 (empty: no hidden"
          + " layer), got '" + spec + "'");
    }
  }

  @Override
  public int[] hidden() {
    return hidden.clone();
  }

}
