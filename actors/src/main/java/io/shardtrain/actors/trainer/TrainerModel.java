package io.shardtrain.actors.trainer;

import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A trainer's copy of the job's model on its backend, cut into the job's blocks: computes a batch's
 * gradients, hands out each block's slice of them and takes in each block's pulled values. Forward
 * and backward run on the model itself on the CPU, on a resident copy on a GPU. Forward can run
 * one layer at a time, each once its blocks' values are in ({@link #blocksByLayer}).
 */
final class TrainerModel implements AutoCloseable {
  private final Backend backend;
  private final GradientStep gradientStep;
  private final int inputDim;
  private final List<String> blocks;
  private final List<Parameter> parameters;
  private final Map<String, Parameter> paramsByName = new HashMap<>();
  private final Map<String, List<BlockSlice>> slicesByParam = new HashMap<>();
  private final List<List<String>> blocksByLayer = new ArrayList<>();

  private TrainerModel(Backend backend, Mlp model, GradientStep gradientStep, List<BlockSlice> layout, int inputDim) {
    this.backend = backend;
    this.gradientStep = gradientStep;
    this.inputDim = inputDim;
    this.blocks = layout.stream().map(BlockSlice::entityId).toList();
    this.parameters = List.copyOf(model.parameters());
    for (Parameter p : parameters) paramsByName.put(p.name(), p);
    for (BlockSlice s : layout) slicesByParam.computeIfAbsent(s.parameter(), k -> new ArrayList<>()).add(s);
    for (int layer = 0; layer < model.denseLayers(); layer++) {
      List<String> ids = new ArrayList<>();
      for (Parameter p : model.parametersOf(layer)) {
        for (BlockSlice s : slicesByParam.get(p.name())) ids.add(s.entityId());
      }
      blocksByLayer.add(List.copyOf(ids));
    }
  }

  /** The job's model on a new backend; fails when its blocks are not the job's (another model or block size). */
  static TrainerModel build(String trainerId, JobSpec job, Supplier<Backend> backends) {
    Backend backend = backends.get();
    Mlp model = job.newModel(backend);
    List<BlockSlice> layout = job.layout(model);
    List<String> ids = layout.stream().map(BlockSlice::entityId).toList();
    if (!ids.equals(job.blocks())) {
      throw new IllegalStateException("trainer " + trainerId + ": the model's blocks " + ids
          + " differ from the job's " + job.blocks());
    }
    return new TrainerModel(backend, model, GradientStep.of(model, job.batch()), layout, job.inputDim());
  }

  /** The blocks' entity ids, in layout order. */
  List<String> blocks() {
    return blocks;
  }

  /** Per dense layer, in forward order, the blocks holding its weights and bias. */
  List<List<String>> blocksByLayer() {
    return blocksByLayer;
  }

  /**
   * Forward and backward on {@code batch}; {@code onGradient} gets each parameter as soon as its
   * gradient is there (last layer first). Returns the mean loss.
   */
  float forwardBackward(Batch batch, Consumer<Parameter> onGradient) {
    beginForward(batch);
    return finishForwardBackward(batch, onGradient);
  }

  /**
   * Starts forward on {@code batch}; no layer has run yet. The step reads the batch's own features,
   * which the reader wrote for this batch alone and nothing changes until its backward has run.
   */
  void beginForward(Batch batch) {
    gradientStep.beginForward(Tensor.wrap(batch.features(), batch.size(), inputDim));
  }

  /** Forward through dense layer {@code layer}, which reads only the values of that layer's blocks. */
  void forwardLayer(int layer) {
    gradientStep.forwardLayer(layer);
  }

  /** The layers forward has not run yet, then backward on the batch forward began on; as {@link #forwardBackward}. */
  float finishForwardBackward(Batch batch, Consumer<Parameter> onGradient) {
    return gradientStep.finishForwardBackward(batch.labels(), onGradient);
  }

  /** The model's parameters, in the model's order. */
  List<Parameter> parameters() {
    return parameters;
  }

  /** Each parameter's values (the model's own arrays) by name, in the model's order. */
  Map<String, float[]> valuesByName() {
    Map<String, float[]> values = new LinkedHashMap<>();
    for (Parameter p : parameters) values.put(p.name(), p.value().data());
    return values;
  }

  /** The blocks {@code p} is cut into. */
  List<BlockSlice> slicesOf(Parameter p) {
    return slicesByParam.get(p.name());
  }

  /** A copy of {@code slice}'s part of {@code p}'s gradient. */
  static float[] gradientOf(Parameter p, BlockSlice slice) {
    return copy(p.grad().data(), slice);
  }

  /** A copy of {@code slice}'s part of {@code p}'s values. */
  static float[] valuesOf(Parameter p, BlockSlice slice) {
    return copy(p.value().data(), slice);
  }

  private static float[] copy(float[] data, BlockSlice slice) {
    // copyOfRange, not new + arraycopy: the JIT fills the new array without zeroing it first, which
    // was half of this copy's cost (a sync x2 run's profile).
    return Arrays.copyOfRange(data, slice.offset(), slice.offset() + slice.length());
  }

  /** Writes a block's pulled values into its parameter. */
  void write(BlockProtocol.BlockValues v) {
    Parameter p = paramsByName.get(v.parameter());
    System.arraycopy(v.values(), 0, p.value().data(), v.offset(), v.values().length);
  }

  @Override
  public void close() {
    gradientStep.close();
    backend.close();
  }
}
