package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.Consumer;

/**
 * A multi-layer perceptron classifier: dense layers {@code dense1 .. denseN} with one activation
 * between each pair, softmax cross-entropy on top.
 *
 * <p>{@link #forwardBackward} hands each parameter to the caller the moment its gradient is
 * final, last layer first, so a trainer can start pushing the top layers while the lower ones
 * are still being differentiated. By default ({@link Initialization#AUTO}) hidden layers take
 * the init that suits the activation ({@link Activation#init()}), the output layer, which feeds
 * the softmax, Glorot-uniform; {@link Initialization#PYTORCH} starts every layer as PyTorch's
 * {@code nn.Linear} does. All values come from one {@code Random(seed)} in layer order, so a seed
 * fixes the model.
 *
 * <p>Forward can also run one dense layer at a time ({@link GradientStep}): a trainer runs a
 * layer as soon as its pulled parameters are in while later layers' are still arriving.
 *
 * <p>Not thread-safe. Returned tensors (logits, gradients) are buffers the model reuses: they
 * hold until the next call.
 */
public final class Mlp implements GradientStep {
  private final Backend backend;
  private final Activation activation;
  private final List<Dense> dense;
  private final List<Layer> activations;
  private final List<Layer> layers;
  private final List<Parameter> parameters;
  private final SoftmaxCrossEntropyLoss loss;
  /** The output of the last dense layer (and its activation) forward ran in this step; null: no step begun. */
  private Tensor forwarded;
  /** The dense layer forward runs next in this step. */
  private int nextLayer;

  private Mlp(Backend backend, Activation activation, List<Dense> dense, List<Layer> activations) {
    this.backend = backend;
    this.activation = activation;
    this.dense = List.copyOf(dense);
    this.activations = List.copyOf(activations);
    List<Layer> all = new ArrayList<>();
    List<Parameter> params = new ArrayList<>();
    for (int i = 0; i < dense.size(); i++) {
      all.add(dense.get(i));
      params.addAll(dense.get(i).parameters());
      if (i < activations.size()) all.add(activations.get(i));
    }
    this.layers = Collections.unmodifiableList(all);
    this.parameters = Collections.unmodifiableList(params);
    this.loss = new SoftmaxCrossEntropyLoss(backend);
  }

  /**
   * A model {@code inputDim -> hidden[0] -> ... -> outputDim}; {@code hidden} may be empty
   * (softmax regression).
   */
  public static Mlp create(Backend backend, int inputDim, int[] hidden, int outputDim,
      Activation activation, long seed) {
    return create(backend, inputDim, hidden, outputDim, activation, Initialization.AUTO, seed);
  }

  /** As {@link #create(Backend, int, int[], int, Activation, long)}, the layers started as {@code init} says. */
  public static Mlp create(Backend backend, int inputDim, int[] hidden, int outputDim,
      Activation activation, Initialization init, long seed) {
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(init, "init");
    Objects.requireNonNull(hidden, "hidden");
    Objects.requireNonNull(activation, "activation");
    int[] widths = new int[hidden.length + 2];
    widths[0] = inputDim;
    System.arraycopy(hidden, 0, widths, 1, hidden.length);
    widths[widths.length - 1] = outputDim;
    for (int w : widths) {
      if (w < 1) {
        throw new IllegalArgumentException("mlp layer widths must be positive, got input " + inputDim
            + ", hidden " + java.util.Arrays.toString(hidden) + ", output " + outputDim);
      }
    }
    Random rng = new Random(seed);
    List<Dense> dense = new ArrayList<>();
    List<Layer> acts = new ArrayList<>();
    for (int i = 0; i + 1 < widths.length; i++) {
      boolean last = i + 2 == widths.length;
      Dense.Init layerInit = init == Initialization.PYTORCH ? Dense.Init.PYTORCH
          : last ? Dense.Init.GLOROT_UNIFORM : activation.init();
      dense.add(new Dense("dense" + (i + 1), widths[i], widths[i + 1], backend, rng, layerInit));
      if (!last && !inProducts(activation)) acts.add(activation.newLayer(backend));
    }
    return new Mlp(backend, activation, dense, acts);
  }

  /**
   * Forward, softmax cross-entropy and backward for one batch {@code x [batch, inputDim]}.
   * Calls {@code onGradient} for each parameter as soon as its gradient is written, last layer
   * first (weight, then bias). The model reads neither the value nor the gradient of a parameter
   * again in this call once it was handed out, so the callback may update the value in place.
   * Returns the mean loss.
   */
  @Override
  public float forwardBackward(Tensor x, int[] labels, Consumer<Parameter> onGradient) {
    beginForward(x);
    return finishForwardBackward(labels, onGradient);
  }

  @Override
  public void beginForward(Tensor x) {
    forwarded = Objects.requireNonNull(x, "x");
    nextLayer = 0;
  }

  @Override
  public void forwardLayer(int layer) {
    if (forwarded == null) throw new IllegalStateException("forwardLayer(" + layer + ") before beginForward");
    if (layer != nextLayer) {
      throw new IllegalStateException("forward runs layer " + nextLayer + " next, not " + layer + " (of "
          + dense.size() + ")");
    }
    Dense d = dense.get(layer);
    boolean hidden = layer + 1 < dense.size();
    if (hidden && rectified()) {
      forwarded = d.forwardRectified(forwarded);
    } else {
      forwarded = d.forward(forwarded);
      if (hidden) forwarded = activations.get(layer).forward(forwarded);
    }
    nextLayer++;
  }

  @Override
  public float finishForwardBackward(int[] labels, Consumer<Parameter> onGradient) {
    Objects.requireNonNull(onGradient, "onGradient");
    float mean = loss.forward(finishForward(), labels);
    Tensor g = loss.backward();
    for (int i = dense.size() - 1; i >= 0; i--) {
      Dense d = dense.get(i);
      d.backwardParameters(g);
      // The input gradient still needs this layer's weights, so compute it before handing the
      // parameters out: a callback may then update them in place. The first layer's input
      // gradient is never used, so that GEMM is skipped.
      Tensor gradInput = i == 0 ? null : rectified() ? d.backwardInputRectified(g) : d.backwardInput(g);
      onGradient.accept(d.weight());
      onGradient.accept(d.bias());
      if (i > 0) g = rectified() ? gradInput : activations.get(i - 1).backward(gradInput);
    }
    return mean;
  }

  /**
   * Whether the rectifier runs inside the dense layers' products, as their last pass, rather than
   * as a layer of its own: with two compute threads each thread then rectifies the part of a
   * layer's output it computed, where a pass of its own read the other core's half.
   */
  private boolean rectified() {
    return inProducts(activation);
  }

  /** Whether {@code activation} runs as the dense layers' last pass, not as a layer ({@link #rectified}). */
  private static boolean inProducts(Activation activation) {
    return activation == Activation.RELU;
  }

  /** Forward through the layers not run yet; the logits. Ends the step's forward: the next needs a new begin. */
  private Tensor finishForward() {
    if (forwarded == null) throw new IllegalStateException("no forward begun");
    while (nextLayer < dense.size()) forwardLayer(nextLayer);
    Tensor logits = forwarded;
    forwarded = null;
    return logits;
  }

  /** The number of dense layers, which {@link #forwardLayer} counts. */
  public int denseLayers() {
    return dense.size();
  }

  /** Dense layer {@code layer}'s parameters, weight then bias: what its forward reads. */
  public List<Parameter> parametersOf(int layer) {
    return dense.get(layer).parameters();
  }

  /** The backend the model computes on. */
  public Backend backend() {
    return backend;
  }

  /** The activation between hidden layers. */
  public Activation activation() {
    return activation;
  }

  /** The output scores {@code [batch, outputDim]} before the softmax. */
  public Tensor logits(Tensor x) {
    beginForward(x);
    return finishForward();
  }

  /** Class with the highest score for each row of {@code x} (the first on ties). */
  public int[] predict(Tensor x) {
    Tensor z = logits(x);
    int[] out = new int[z.rows()];
    backend.rowArgmax(z, out);
    return out;
  }

  /** Softmax probabilities of the last {@link #forwardBackward}. */
  public Tensor probabilities() {
    return loss.probabilities();
  }

  /** All parameters: layer order, weight then bias. The list is fixed for the model's life. */
  public List<Parameter> parameters() {
    return parameters;
  }

  /** Total number of scalar parameters. */
  public long parameterCount() {
    long n = 0;
    for (Parameter p : parameters) n += p.size();
    return n;
  }

  /**
   * The scalar parameters, weights and biases, of the model {@link #create} would make with these
   * dimensions, without making it.
   */
  public static long parameterCount(int inputDim, int[] hidden, int outputDim) {
    long n = 0;
    int in = inputDim;
    for (int out : hidden) {
      n += (long) in * out + out;
      in = out;
    }
    return n + (long) in * outputDim + outputDim;
  }

  /**
   * Dense and activation layers in forward order; with the rectifier the dense layers alone, whose
   * products end with it ({@link Dense#forwardRectified}).
   */
  public List<Layer> layers() {
    return layers;
  }

  public int inputDim() {
    return dense.get(0).inputWidth();
  }

  public int outputDim() {
    return dense.get(dense.size() - 1).outputWidth();
  }
}
