package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.List;
import java.util.Objects;

/**
 * The rectifier, {@code max(x, 0)}, element-wise. Backward passes the gradient where the output
 * is positive, which is exactly where the input was.
 *
 * <p>It keeps its own output, not the input, for backward, so the caller may reuse the input
 * buffer once forward has returned.
 */
public final class Relu implements Layer {
  private final Backend backend;
  private Tensor output;
  private Tensor gradInput;

  public Relu(Backend backend) {
    this.backend = Objects.requireNonNull(backend, "backend");
  }

  @Override
  public Tensor forward(Tensor input) {
    output = Buffers.ensureLike(output, input);
    backend.relu(input, output);
    return output;
  }

  @Override
  public Tensor backward(Tensor gradOutput) {
    Buffers.requireForward(output, "Relu");
    gradInput = Buffers.ensureLike(gradInput, output);
    backend.reluBackward(output, gradOutput, gradInput);
    return gradInput;
  }

  @Override
  public List<Parameter> parameters() {
    return List.of();
  }
}
