package io.shardtrain.actors.job;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParamShape;
import io.shardtrain.actors.sparse.TableSpec;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Initialization;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.persistence.model.ModelParameters;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One training job as the master stores it and every trainer reads it: the model, the data, the
 * optimizer and how trainers and blocks synchronise. {@code blocks} are the parameter-block
 * entity ids, computed once by whoever submits the job from the real model, each in the job's
 * namespace ({@code jobId/parameter#index}), so jobs on one journal never share a block. A click-through job
 * ({@code ctr} non-null) trains a factorization machine instead of the MLP: {@code blocks} then hold
 * its dense part, its id rows live in the sparse table {@link #table()}.
 */
public record JobSpec(
    String jobId,
    String dataset,
    int trainExamples,
    int inputDim,
    int classes,
    List<Integer> hidden,
    String activation,
    long seed,
    BlockSpec.Mode mode,
    int trainers,
    int batch,
    int epochs,
    long steps,
    String optimizer,
    float lr,
    String lrSchedule,
    float weightDecay,
    long maxStaleness,
    int blockSize,
    List<String> blocks,
    // Left out when null, so an MLP job is written as it was before click-through jobs existed.
    @JsonInclude(JsonInclude.Include.NON_NULL) CtrModel ctr,
    // How the MLP's layers started (Initialization's label); null for the default, auto, so such a
    // job is written as before the choice existed.
    @JsonInclude(JsonInclude.Include.NON_NULL) String init) implements CborSerializable {

  /** A job whose MLP starts as {@link Initialization#AUTO} does (and a click-through job). */
  public JobSpec(String jobId, String dataset, int trainExamples, int inputDim, int classes, List<Integer> hidden,
      String activation, long seed, BlockSpec.Mode mode, int trainers, int batch, int epochs, long steps,
      String optimizer, float lr, String lrSchedule, float weightDecay, long maxStaleness, int blockSize,
      List<String> blocks, CtrModel ctr) {
    this(jobId, dataset, trainExamples, inputDim, classes, hidden, activation, seed, mode, trainers, batch, epochs,
        steps, optimizer, lr, lrSchedule, weightDecay, maxStaleness, blockSize, blocks, ctr, null);
  }

  public JobSpec {
    if (trainers < 1) throw new IllegalArgumentException("a job needs at least 1 trainer, got " + trainers);
    if (trainExamples < trainers) {
      throw new IllegalArgumentException(trainExamples + " training examples cannot be split over " + trainers + " trainers");
    }
    if (epochs < 1 && steps < 1) throw new IllegalArgumentException("a job needs epochs or steps");
    if (blocks.isEmpty()) throw new IllegalArgumentException("a job needs at least one parameter block");
    if (ctr != null && mode == BlockSpec.Mode.ALLREDUCE) {
      throw new IllegalArgumentException("a click-through job trains with a parameter server (sync or async); its"
          + " sparse table has no all-reduce mode");
    }
    hidden = List.copyOf(hidden);
    blocks = List.copyOf(blocks);
    if (init != null) {
      Initialization parsed = Initialization.parse(init);
      init = parsed == Initialization.AUTO ? null : parsed.label();
    }
  }

  /** How the MLP's layers start. */
  public Initialization initialization() {
    return init == null ? Initialization.AUTO : Initialization.parse(init);
  }

  /** The sparse table of a click-through job; null for an MLP job. */
  public TableSpec table() {
    return ctr == null ? null : ctr.table(jobId, mode, maxStaleness, seed);
  }

  /** The one parameter a click-through job keeps in its blocks: the machine's dense part. */
  public static final String CTR_DENSE = "fm.dense";

  /** The blocks of a click-through job's dense part ({@link #CTR_DENSE}). */
  public List<BlockSlice> denseLayout() {
    return BlockLayout.of(List.of(new ParamShape(CTR_DENSE, ctr.machine().denseSize())), blockSize, jobId);
  }

  /** The blocks of {@code model}'s parameters, named in this job's namespace. */
  public List<BlockSlice> layout(Mlp model) {
    return BlockLayout.of(model, blockSize, jobId);
  }

  /** The entity ids of the sparse table's shards; none for an MLP job. */
  public List<String> tableShards() {
    TableSpec t = table();
    if (t == null) return List.of();
    List<String> ids = new java.util.ArrayList<>(t.shards());
    for (int s = 0; s < t.shards(); s++) ids.add(t.entityId(s));
    return ids;
  }

  /** Epochs to run; a job bounded by steps keeps handing out data until its trainers stop. */
  public boolean boundedByEpochs() {
    return steps <= 0;
  }

  /**
   * The examples one block update was planned to cover: a sync step takes every trainer's batch, an
   * async update one trainer's. Blocks run the learning-rate schedule on the examples they applied,
   * counted in such updates, so it ends when the planned examples are consumed however many
   * trainers are left.
   */
  public long examplesPerUpdate() {
    return (long) batch * (mode.lockstep() ? trainers : 1);
  }

  public int[] hiddenArray() {
    return hidden.stream().mapToInt(Integer::intValue).toArray();
  }

  /**
   * The job's model as initialised from its seed, on {@code backend}: what trainers compute with
   * and what pulled parameters are written into.
   */
  public Mlp newModel(Backend backend) {
    return Mlp.create(backend, inputDim, hiddenArray(), classes, Activation.parse(activation), initialization(),
        seed);
  }

  /** {@code model}'s parameters at {@code version} with this job's description, for {@code ModelFiles.save}. */
  public ModelSnapshot snapshot(Mlp model, long version) {
    Map<String, String> description = new LinkedHashMap<>();
    description.put("model", SavedModels.MLP);
    description.put("inputDim", String.valueOf(inputDim));
    description.put("hidden", hidden.toString());
    description.put("classes", String.valueOf(classes));
    description.put("activation", activation);
    if (init != null) description.put("init", initialization().label());
    description.put("job", jobId);
    description.put("dataset", dataset);
    // The data order's: a checkpoint's reader offsets are positions in it.
    description.put("seed", String.valueOf(seed));
    // What wrote a checkpoint's slots: another update rule would read them as its own.
    description.put("optimizer", optimizer);
    return ModelParameters.snapshot(model.parameters(), description, version);
  }
}
