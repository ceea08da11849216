package io.shardtrain.compute.nn;

import io.shardtrain.compute.ColumnFill;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.backend.CrewStep;
import io.shardtrain.compute.backend.TimedBackend;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * An {@link Mlp}'s step on a CPU backend of several threads, run by all of them together from the
 * first product to the last gradient ({@link CrewStep}), with the model's gradients and its
 * contract: the same bits as {@link Mlp#forwardBackward} on one thread, each parameter handed to
 * {@code onGradient} last layer first, all of them once backward has ended. The layers run in
 * {@link #finishForwardBackward}, once all parameters are in: {@link #forwardLayer} only keeps the
 * count. A batch the crew does not take (too small to cut, or the threads busy with another caller)
 * runs as {@link Mlp#forwardBackward}.
 */
final class CrewMlpStep implements GradientStep {
  private final Mlp model;
  private final CrewStep crew;
  private final Tensor[] weights, biases, weightGrads, biasGrads;
  /** Each layer's weight and bias. */
  private final Parameter[][] parameters;
  private Tensor x;
  private int nextLayer;
  private long crewSteps;

  private CrewMlpStep(Mlp model, CrewStep crew) {
    this.model = model;
    this.crew = crew;
    int layers = model.denseLayers();
    weights = new Tensor[layers];
    biases = new Tensor[layers];
    weightGrads = new Tensor[layers];
    biasGrads = new Tensor[layers];
    parameters = new Parameter[layers][];
    for (int l = 0; l < layers; l++) {
      List<Parameter> p = model.parametersOf(l);
      parameters[l] = p.toArray(new Parameter[0]);
      weights[l] = p.get(0).value();
      biases[l] = p.get(1).value();
      weightGrads[l] = p.get(0).grad();
      biasGrads[l] = p.get(1).grad();
    }
  }

  /**
   * The crew's step for {@code model}; null where its backend or its activation has none. On a
   * {@link TimedBackend} the crew's phases are timed.
   */
  static CrewMlpStep of(Mlp model) {
    if (model.activation() != Activation.RELU || model.denseLayers() < 2) return null;
    int layers = model.denseLayers();
    int[] widths = new int[layers + 1];
    widths[0] = model.inputDim();
    for (int l = 0; l < layers; l++) widths[l + 1] = model.parametersOf(l).get(0).value().cols();
    Backend backend = model.backend();
    CrewStep crew = backend instanceof CpuBackend cpu ? cpu.crewStep(widths)
        : backend instanceof TimedBackend timed ? timed.crewStep(widths)
        : null;
    return crew == null ? null : new CrewMlpStep(model, crew);
  }

  /** How many steps the crew ran, not the model. */
  long crewSteps() {
    return crewSteps;
  }

  @Override
  public void beginForward(Tensor x) {
    this.x = Objects.requireNonNull(x, "x");
    nextLayer = 0;
  }

  @Override
  public void forwardLayer(int layer) {
    if (x == null) throw new IllegalStateException("forwardLayer(" + layer + ") before beginForward");
    if (layer != nextLayer) {
      throw new IllegalStateException("forward runs layer " + nextLayer + " next, not " + layer + " (of "
          + model.denseLayers() + ")");
    }
    nextLayer++;
  }

  @Override
  public float finishForwardBackward(int[] labels, Consumer<Parameter> onGradient) {
    Objects.requireNonNull(onGradient, "onGradient");
    if (x == null) throw new IllegalStateException("no forward begun");
    Tensor in = x;
    x = null;
    if (crewStep(in, null, labels, onGradient)) return crew.loss();
    // The model's own step: it names what does not fit, or runs what the crew does not take.
    return model.forwardBackward(in, labels, onGradient);
  }

  /** The crew's threads each copy the batch's columns they read, in the step ({@link CrewStep}). */
  @Override
  public float forwardBackward(Tensor x, ColumnFill fill, int[] labels, Consumer<Parameter> onGradient) {
    Objects.requireNonNull(fill, "fill");
    Objects.requireNonNull(onGradient, "onGradient");
    if (crewStep(x, fill, labels, onGradient)) return crew.loss();
    // Copying again what some threads may have copied before the crew gave the step up changes nothing.
    fill.columns(0, x.cols());
    return model.forwardBackward(x, labels, onGradient);
  }

  /** Runs the step on the crew, {@code fill} (where not null) copying the batch; false where it does not take it. */
  private boolean crewStep(Tensor in, ColumnFill fill, int[] labels, Consumer<Parameter> onGradient) {
    boolean fits = in.rank() == 2 && in.cols() == model.inputDim() && labels != null && labels.length == in.rows();
    if (!fits || !crew.takes(in.rows()) || !crew.step(in, fill, labels, weights, biases, weightGrads, biasGrads)) {
      return false;
    }
    crewSteps++;
    for (int l = weights.length - 1; l >= 0; l--) {
      onGradient.accept(parameters[l][0]);
      onGradient.accept(parameters[l][1]);
    }
    return true;
  }
}
