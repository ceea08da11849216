package io.shardtrain.actors.config;

import com.typesafe.config.Config;

/**
 * The click-through model and data settings, read once from {@code shardtrain.train.ctr}: the
 * synthetic generator's shape ({@code --dataset ctr}), the factorization machine's factor count,
 * how its sparse rows start and are updated (AdaGrad, where each row has its own step sizes), the
 * AUC histogram's bins, how a Criteo file is read and split ({@code --dataset criteo:PATH}), and
 * how many shards a cluster job's table has.
 * The dense part of the model uses the job's optimizer and learning rate ({@link TrainSettings}).
 */
public record CtrSettings(int examples, int testExamples, int fields, int vocabulary, int hashSpace, int denseDim,
    double zipf, double idWeightStd, double denseWeightStd, double bias, int factors, double rowLr,
    double rowInitialAccumulator, double initStd, int aucBins, int criteoLimit, double criteoTestFraction, int tableShards) {

  public CtrSettings {
    if (examples < 1 || testExamples < 1) {
      throw new IllegalArgumentException("shardtrain.train.ctr.examples and test-examples must be >= 1, not "
          + examples + " and " + testExamples);
    }
    if (fields < 1 || vocabulary < 1 || hashSpace < 1 || denseDim < 0) {
      throw new IllegalArgumentException("shardtrain.train.ctr.fields, vocabulary and hash-space must be >= 1 and"
          + " dense-dim >= 0, not " + fields + ", " + vocabulary + ", " + hashSpace + " and " + denseDim);
    }
    if (!(zipf >= 0) || !(idWeightStd >= 0) || !(denseWeightStd >= 0) || !Double.isFinite(bias)) {
      throw new IllegalArgumentException("shardtrain.train.ctr.zipf, id-weight-std and dense-weight-std must be"
          + " finite and >= 0 and bias finite, not " + zipf + ", " + idWeightStd + ", " + denseWeightStd + " and " + bias);
    }
    if (factors < 1) throw new IllegalArgumentException("shardtrain.train.ctr.factors must be >= 1, not " + factors);
    if (!(rowLr > 0) || !(rowInitialAccumulator > 0) || !(initStd >= 0)) {
      throw new IllegalArgumentException("shardtrain.train.ctr.row-lr and row-initial-accumulator must be positive"
          + " and init-std non-negative, not " + rowLr + ", " + rowInitialAccumulator + " and " + initStd);
    }
    if (tableShards < 0) {
      throw new IllegalArgumentException("shardtrain.train.ctr.table-shards must be >= 0 (0: one per ps node), not "
          + tableShards);
    }
    if (aucBins < 2) throw new IllegalArgumentException("shardtrain.train.ctr.auc-bins must be >= 2, not " + aucBins);
    if (criteoLimit < 0) {
      throw new IllegalArgumentException("shardtrain.train.ctr.criteo-limit must be >= 0 (0: all), not " + criteoLimit);
    }
    if (!(criteoTestFraction > 0 && criteoTestFraction < 1)) {
      throw new IllegalArgumentException("shardtrain.train.ctr.criteo-test-fraction must be in (0, 1), not "
          + criteoTestFraction);
    }
  }

  /** A cluster job's table shards: {@code table-shards} when set, else one per ps node ({@code psNodes}, at least 1). */
  public int tableShards(int psNodes) {
    return tableShards > 0 ? tableShards : Math.max(1, psNodes);
  }

  public static CtrSettings fromConfig(Config config) {
    Config c = config.getConfig("shardtrain.train.ctr");
    return new CtrSettings(c.getInt("examples"), c.getInt("test-examples"), c.getInt("fields"),
        c.getInt("vocabulary"), c.getInt("hash-space"), c.getInt("dense-dim"), c.getDouble("zipf"),
        c.getDouble("id-weight-std"), c.getDouble("dense-weight-std"), c.getDouble("bias"), c.getInt("factors"),
        c.getDouble("row-lr"), c.getDouble("row-initial-accumulator"), c.getDouble("init-std"),
        c.getInt("auc-bins"), c.getInt("criteo-limit"), c.getDouble("criteo-test-fraction"), c.getInt("table-shards"));
  }
}
