package io.shardtrain.actors.job;

import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;

/**
 * The click-through part of a job: a factorization machine of {@code fields} ids and
 * {@code denseDim} dense features per example with {@code factors} factors, whose id rows live in
 * a sparse table of {@code hashSpace} rows over {@code tableShards} shards (AdaGrad per row, rows
 * started from a normal of {@code initStd}) and whose dense part lives in the job's parameter
 * blocks; test AUC is counted in histograms of {@code aucBins} bins. {@code dataFingerprint}: the
 * training set's {@code CtrDataset.fingerprint()}, which each trainer checks its own data against.
 * Primitive fields only, so the job's CBOR form does not depend on the compute classes.
 */
public record CtrModel(int fields, int denseDim, int factors, long hashSpace, int tableShards, float rowLr,
    float rowInitialAccumulator, float initStd, int aucBins, long dataFingerprint) {

  public CtrModel {
    if (fields < 1 || denseDim < 0 || factors < 1) {
      throw new IllegalArgumentException("a factorization machine needs fields >= 1, dense features >= 0 and factors"
          + " >= 1, not " + fields + ", " + denseDim + " and " + factors);
    }
    if (hashSpace < 1 || tableShards < 1) {
      throw new IllegalArgumentException("a sparse table needs >= 1 row id and >= 1 shard, not " + hashSpace + " and "
          + tableShards);
    }
    if (aucBins < 2) throw new IllegalArgumentException("an AUC histogram needs >= 2 bins, not " + aucBins);
  }

  public FactorizationMachine machine() {
    return new FactorizationMachine(fields, denseDim, factors);
  }

  /** The job's sparse table: named after the job, sync or async like its blocks. */
  public TableSpec table(String jobId, BlockSpec.Mode mode, long maxStaleness, long seed) {
    TableSpec spec = TableSpec.of(tableName(jobId), tableShards, hashSpace, machine().rowWidth(),
        new RowInit(RowInit.Kind.NORMAL, initStd, seed), RowOptimizer.adagrad(rowLr, rowInitialAccumulator));
    return mode == BlockSpec.Mode.ASYNC ? spec.withMode(TableSpec.Mode.ASYNC, maxStaleness) : spec;
  }

  /** A table name from a job id: '/' separates a table's name from its shard number, so it becomes '_'. */
  static String tableName(String jobId) {
    return "rows-" + jobId.replace('/', '_');
  }
}
