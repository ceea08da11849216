package io.shardtrain.actors.job;

import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.compute.nn.FactorizationMachine;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.persistence.model.ParameterValues;
import io.shardtrain.persistence.model.TableValues;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

  /** The name of the table's rows in a saved model. */
  public static final String ROWS = "fm.rows";

  /**
   * The model as a saved model holds it: the dense part ({@link JobSpec#CTR_DENSE}) and the table's
   * stored rows ({@link #ROWS}, {@code [w, v_1..v_k]} each); an id the table does not store starts
   * from a normal of {@code initStd} drawn from the id and {@code seed}, as in training.
   */
  public ModelSnapshot snapshot(String jobId, String dataset, long seed, String optimizer, long version, float[] dense,
      long[] ids, float[] rows) {
    Map<String, String> description = new LinkedHashMap<>();
    description.put("model", SavedModels.FM);
    description.put("fields", String.valueOf(fields));
    description.put("denseDim", String.valueOf(denseDim));
    description.put("factors", String.valueOf(factors));
    description.put("hashSpace", String.valueOf(hashSpace));
    description.put("rowInit", "normal");
    description.put("rowInitStd", String.valueOf(initStd));
    if (jobId != null) description.put("job", jobId);
    description.put("dataset", dataset);
    description.put("seed", String.valueOf(seed));
    description.put("optimizer", optimizer);
    return new ModelSnapshot(description, version,
        List.of(new ParameterValues(JobSpec.CTR_DENSE, new int[] {dense.length}, dense)),
        List.of(new TableValues(ROWS, machine().rowWidth(), ids, rows)));
  }

  /**
   * Checks that {@code saved} (read from {@code dir}) is a factorization machine of this shape, so a
   * job of this model can start from its dense part and rows: the dense part's length (dense
   * features and factors), the rows' width, the hash space (the same ids name the same values) and
   * every row id inside it; the error names the first that differs. The number of fields may
   * differ: an id is a field's value, so a job of other fields takes the rows of the ids it shares.
   */
  public void checkSaved(ModelSnapshot saved, java.nio.file.Path dir) {
    SavedModels.requireKind(saved.description(), dir, SavedModels.FM, "this job");
    String start = "cannot initialise from " + dir.toAbsolutePath().normalize() + ": ";
    String shape = " (it was saved with " + saved.description().get("denseDim") + " dense features and "
        + saved.description().get("factors") + " factors; this job has " + denseDim + " and " + factors + ")";
    int dense;
    TableValues rows;
    try {
      dense = saved.parameter(JobSpec.CTR_DENSE).size();
      rows = saved.table(ROWS);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(start + e.getMessage(), e);
    }
    if (dense != machine().denseSize()) {
      throw new IllegalArgumentException(start + "its dense part has " + dense + " values, this job's needs "
          + machine().denseSize() + shape);
    }
    if (rows.dim() != machine().rowWidth()) {
      throw new IllegalArgumentException(start + "its rows have " + rows.dim() + " values, this job's have "
          + machine().rowWidth() + shape);
    }
    // An id is a hash of a field's value modulo the space: in another space it names other values.
    String space = saved.description().get("hashSpace");
    if (space != null && !space.equals(String.valueOf(hashSpace))) {
      throw new IllegalArgumentException(start + "it was saved with hash space " + space + ", this job's is " + hashSpace
          + " (shardtrain.train.ctr.hash-space): its rows would belong to other ids");
    }
    for (long id : rows.rows() == 0 ? new long[0] : new long[] {rows.ids()[0], rows.ids()[rows.rows() - 1]}) {
      if (id < 0 || id >= hashSpace) {
        throw new IllegalArgumentException(start + "its row id " + id + " is outside this job's id space [0, "
            + hashSpace + ") (shardtrain.train.ctr.hash-space)");
      }
    }
  }

  /**
   * Refuses checkpoint durability ({@code shardtrain.ps.durability = checkpoint}): a lost ps node
   * would roll the dense blocks back to a checkpoint, while the table's shards journal every step
   * and no checkpoint holds their rows.
   */
  public static void requireExactDurability(io.shardtrain.actors.ps.PsSettings.Durability durability) {
    if (durability == io.shardtrain.actors.ps.PsSettings.Durability.CHECKPOINT) {
      throw new IllegalArgumentException("a click-through job needs shardtrain.ps.durability = exact: under checkpoint"
          + " durability a lost ps node rolls its blocks back to a checkpoint, which would not hold its table's rows");
    }
  }

  /** A table name from a job id: '/' separates a table's name from its shard number, so it becomes '_'. */
  static String tableName(String jobId) {
    return "rows-" + jobId.replace('/', '_');
  }
}
