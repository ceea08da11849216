package io.shardtrain.compute.nn;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import java.util.List;
import java.util.Objects;

/**
 * Hyperbolic tangent, element-wise; backward uses {@code 1 - y^2} from the kept output {@code y}.
 *
 * <p>It keeps its own output, not the input, for backward, so the caller may reuse the input
 * buffer once forward has returned.
 */
public final class Tanh implements Layer {
  private final Backend backend;
  private Tensor output;
  private Tensor gradInput;

  public Tanh(Backend backend) {
    this.backend = Objects.requireNonNull(backend, "backend");
  }

  @Override
  public Tensor forward(Tensor input) {
    output = Buffers.ensureLike(output, input);
    backend.tanh(input, output);
    return output;
  }

  @Override
  public Tensor backward(Tensor gradOutput) {
    Buffers.requireForward(output, "Tanh");
    gradInput = Buffers.ensureLike(gradInput, output);
    backend.tanhBackward(output, gradOutput, gradInput);
    return gradInput;
  }

  @Override
  public List<Parameter> parameters() {
    return List.of();
  }
}
