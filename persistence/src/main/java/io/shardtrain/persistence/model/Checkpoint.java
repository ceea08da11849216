package io.shardtrain.persistence.model;

import java.util.List;
import java.util.Objects;

/**
 * A globally consistent training checkpoint: the model with every parameter at one step, each
 * parameter's optimizer slots and update count, and the master's reader offsets at that step
 * (docs/MODEL-FORMAT.md, "Checkpoints"). {@code model().version()} is the step.
 */
public record Checkpoint(ModelSnapshot model, List<Slots> slots, List<ReaderOffset> readerOffsets, int epochsDone) {

  /**
   * One parameter's optimizer state: the slot arrays (each as long as the parameter), the update
   * count and the examples behind those updates (where the learning-rate schedule stands; -1 in a
   * checkpoint written before it was recorded).
   */
  public record Slots(String parameter, long updates, long examples, List<float[]> values) {
    public Slots {
      Objects.requireNonNull(parameter, "parameter");
      if (updates < 0) throw new IllegalArgumentException("parameter " + parameter + ": updates must be >= 0");
      if (examples < -1) throw new IllegalArgumentException("parameter " + parameter + ": examples must be >= 0");
      values = List.copyOf(values);
    }
  }

  /** Where the reader of data task {@code task} of epoch {@code epoch} stood: {@code offset} examples into it. */
  public record ReaderOffset(int epoch, int task, long offset) {
    public ReaderOffset {
      if (epoch < 0 || task < 0 || offset < 0) {
        throw new IllegalArgumentException("reader offset needs epoch, task and offset >= 0, got " + epoch + "/"
            + task + "@" + offset);
      }
    }
  }

  public Checkpoint {
    Objects.requireNonNull(model, "model");
    slots = List.copyOf(slots);
    readerOffsets = List.copyOf(readerOffsets);
    for (Slots s : slots) {
      ParameterValues p = model.parameter(s.parameter());
      for (float[] v : s.values()) {
        if (v.length != p.size()) {
          throw new IllegalArgumentException("optimizer slot of " + s.parameter() + " has " + v.length
              + " values, the parameter has " + p.size());
        }
      }
    }
  }

  /** The step every value belongs to. */
  public long step() {
    return model.version();
  }

  /** The optimizer state of {@code parameter}, or null if the checkpoint has none for it. */
  public Slots slotsOf(String parameter) {
    for (Slots s : slots) {
      if (s.parameter().equals(parameter)) return s;
    }
    return null;
  }
}
