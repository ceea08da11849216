package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * A fully connected layer, {@code y = x W + b}, with {@code W} of shape {@code [in, out]} and
 * {@code b} of shape {@code [out]}; parameters {@code <name>.weight} and {@code <name>.bias}.
 *
 * <p>Weights start He/Kaiming-uniform, {@code U(-sqrt(6/in), sqrt(6/in))}, which keeps the
 * activation variance steady through ReLU layers, or Glorot-uniform,
 * {@code U(-sqrt(6/(in+out)), sqrt(6/(in+out)))}, the usual choice before tanh and sigmoid, and
 * biases at zero; or as PyTorch's {@code nn.Linear} starts, weights and then biases
 * {@code U(-1/sqrt(in), 1/sqrt(in))}. Backward is split in {@link #backwardParameters} and
 * {@link #backwardInput} so a model can hand out this layer's gradients before it spends time on
 * the input gradient (and skip that entirely for the first layer).
 */
public final class Dense implements Layer {

  /** How the weights are drawn. */
  public enum Init {
    HE_UNIFORM,
    GLOROT_UNIFORM,
    /** {@code torch.nn.Linear}'s default: weights and biases {@code U(-1/sqrt(in), 1/sqrt(in))}. */
    PYTORCH
  }

  private final String name;
  private final int in;
  private final int out;
  private final Backend backend;
  private final Parameter weight;
  private final Parameter bias;

  private Tensor input;
  private Tensor output;
  private Tensor gradInput;

  /** A layer with He/Kaiming-uniform weights. */
  public Dense(String name, int in, int out, Backend backend, Random initRng) {
    this(name, in, out, backend, initRng, Init.HE_UNIFORM);
  }

  public Dense(String name, int in, int out, Backend backend, Random initRng, Init init) {
    if (in < 1 || out < 1) {
      throw new IllegalArgumentException(name + ": dense sizes must be positive, got in=" + in + " out=" + out);
    }
    this.name = Objects.requireNonNull(name, "name");
    this.in = in;
    this.out = out;
    this.backend = Objects.requireNonNull(backend, "backend");
    Tensor w = Tensor.zeros(in, out);
    double limit = switch (init) {
      case HE_UNIFORM -> Math.sqrt(6.0 / in);
      case GLOROT_UNIFORM -> Math.sqrt(6.0 / (in + out));
      case PYTORCH -> 1 / Math.sqrt(in);
    };
    float[] ws = w.data();
    for (int i = 0; i < ws.length; i++) ws[i] = (float) ((initRng.nextDouble() * 2 - 1) * limit);
    Tensor b = Tensor.zeros(out);
    if (init == Init.PYTORCH) {
      float[] bs = b.data();
      for (int i = 0; i < bs.length; i++) bs[i] = (float) ((initRng.nextDouble() * 2 - 1) * limit);
    }
    this.weight = new Parameter(name + ".weight", w);
    this.bias = new Parameter(name + ".bias", b);
  }

  public String name() {
    return name;
  }

  public int inputWidth() {
    return in;
  }

  public int outputWidth() {
    return out;
  }

  public Parameter weight() {
    return weight;
  }

  public Parameter bias() {
    return bias;
  }

  @Override
  public Tensor forward(Tensor x) {
    return forward(x, false);
  }

  /**
   * {@code max(x W + b, 0)}: forward into the rectifier, which the product applies as its last
   * pass ({@link Backend#gemmBiasRelu}). Its input gradient is {@link #backwardInputRectified} of the
   * next layer.
   */
  public Tensor forwardRectified(Tensor x) {
    return forward(x, true);
  }

  private Tensor forward(Tensor x, boolean rectify) {
    if (x.rank() != 2 || x.cols() != in) {
      throw new IllegalArgumentException(name + ".forward: input shape " + x.shapeString()
          + " does not match weight shape " + weight.value().shapeString() + " (needs " + in + " columns)");
    }
    int batch = x.rows();
    output = Buffers.ensure(output, batch, out);
    if (rectify) {
      backend.gemmBiasRelu(x, weight.value(), bias.value(), output);
    } else {
      // Start from the bias in every row, then accumulate x W on top (beta = 1): one pass fewer
      // than gemm followed by a bias add.
      float[] o = output.data(), b = bias.value().data();
      for (int r = 0; r < batch; r++) System.arraycopy(b, 0, o, r * out, out);
      backend.gemm(false, false, 1f, x, weight.value(), 1f, output);
    }
    input = x;
    return output;
  }

  @Override
  public Tensor backward(Tensor gradOutput) {
    backwardParameters(gradOutput);
    return backwardInput(gradOutput);
  }

  /** Writes {@code dW = x^T g} and {@code db = columnSums(g)} for the last forward's input x. */
  public void backwardParameters(Tensor gradOutput) {
    checkGradOutput(gradOutput);
    backend.gemm(true, false, 1f, input, gradOutput, 0f, weight.grad());
    backend.columnSums(gradOutput, bias.grad());
  }

  /** Returns {@code dx = g W^T}, in a buffer this layer owns. */
  public Tensor backwardInput(Tensor gradOutput) {
    checkGradOutput(gradOutput);
    gradInput = Buffers.ensure(gradInput, input.rows(), in);
    backend.gemm(false, true, 1f, gradOutput, weight.value(), 0f, gradInput);
    return gradInput;
  }

  /**
   * {@code dx = g W^T where x > 0, else 0}: the input gradient carried on through the rectifier
   * that wrote this layer's input x ({@link #forwardRectified} of the layer before), the gate the
   * product's last pass ({@link Backend#gemmReluBackward}).
   */
  public Tensor backwardInputRectified(Tensor gradOutput) {
    checkGradOutput(gradOutput);
    gradInput = Buffers.ensure(gradInput, input.rows(), in);
    backend.gemmReluBackward(false, true, 1f, gradOutput, weight.value(), 0f, gradInput, input);
    return gradInput;
  }

  private void checkGradOutput(Tensor g) {
    Buffers.requireForward(input, name);
    if (!g.sameShape(output)) {
      throw new IllegalArgumentException(name + ".backward: gradient shape " + g.shapeString()
          + " does not match output shape " + output.shapeString());
    }
  }

  @Override
  public List<Parameter> parameters() {
    return List.of(weight, bias);
  }

  @Override
  public String toString() {
    return "Dense(" + name + ", " + in + " -> " + out + ")";
  }
}
