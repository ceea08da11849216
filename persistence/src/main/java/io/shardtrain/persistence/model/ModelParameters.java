package io.shardtrain.persistence.model;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.nn.Parameter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Converts between a {@link ModelSnapshot} and a model's {@link Parameter}s (for example
 * {@code Mlp.parameters()}), matching by name.
 *
 * <p>{@link #copyInto} is what {@code --init-from DIR} uses: it fills an already built model with
 * saved values. Only full parameters are stored, so the new job may cut them into blocks of any
 * size over any number of {@code ps} nodes.
 */
public final class ModelParameters {
  private ModelParameters() {}

  /** A snapshot holding copies of {@code params}' current values, in their order. */
  public static ModelSnapshot snapshot(List<Parameter> params, Map<String, String> description,
      long version) {
    List<ParameterValues> out = new ArrayList<>(params.size());
    for (Parameter p : params) {
      out.add(new ParameterValues(p.name(), p.shape(), p.value().data().clone()));
    }
    return new ModelSnapshot(description, version, out);
  }

  /** New {@link Parameter}s (zero gradients) holding copies of the snapshot's values, in order. */
  public static List<Parameter> toParameters(ModelSnapshot snapshot) {
    List<Parameter> out = new ArrayList<>(snapshot.parameters().size());
    for (ParameterValues p : snapshot.parameters()) {
      out.add(new Parameter(p.name(), Tensor.wrap(p.values().clone(), p.shape())));
    }
    return out;
  }

  /**
   * Copies the snapshot's values into {@code targets} by name. The model and the snapshot must hold
   * the same set of names with the same shapes; everything is checked before any value is written,
   * so on an error the model is unchanged.
   *
   * @throws IllegalArgumentException naming a parameter the snapshot lacks, one the model lacks,
   *     or a parameter whose shapes differ (both shapes given)
   */
  public static void copyInto(ModelSnapshot snapshot, List<Parameter> targets) {
    Set<String> unused = new LinkedHashSet<>(snapshot.names());
    List<ParameterValues> sources = new ArrayList<>(targets.size());
    for (Parameter t : targets) {
      if (!unused.remove(t.name())) {
        throw new IllegalArgumentException("the model's parameter " + t.name()
            + " is not in the saved model, which has " + snapshot.names());
      }
      ParameterValues s = snapshot.parameter(t.name());
      if (!Arrays.equals(s.shape(), t.shape())) {
        throw new IllegalArgumentException("parameter " + t.name() + " has shape "
            + Tensor.shapeString(s.shape()) + " in the saved model but "
            + Tensor.shapeString(t.shape()) + " in the model");
      }
      sources.add(s);
    }
    if (!unused.isEmpty()) {
      throw new IllegalArgumentException("the saved model has parameters the model lacks: " + unused);
    }
    for (int i = 0; i < targets.size(); i++) {
      float[] v = sources.get(i).values();
      System.arraycopy(v, 0, targets.get(i).value().data(), 0, v.length);
    }
  }
}
