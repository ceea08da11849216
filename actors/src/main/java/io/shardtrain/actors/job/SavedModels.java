package io.shardtrain.actors.job;

import io.shardtrain.compute.NumericChecks;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelParameters;
import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.persistence.model.TableValues;

/** Saved models a job starts from ({@code init-from}): loaded, checked, and copied into an MLP. */
public final class SavedModels {
  private SavedModels() {}

  /**
   * Overwrites {@code model}'s parameters with a saved model's (docs/MODEL-FORMAT.md). Blocks are
   * cut from whole parameters, so the saved model may come from any number of ps nodes or block
   * size; names and shapes must match, and an error names the first that does not.
   */
  public static void initFrom(java.nio.file.Path dir, Mlp model) {
    ModelSnapshot saved = load(dir);
    dir = dir.toAbsolutePath().normalize();
    if ("fm".equals(saved.description().get("model"))) {
      throw new IllegalArgumentException("cannot initialise from " + dir + ": it holds a factorization machine (model"
          + " \"fm\"), not an MLP");
    }
    try {
      ModelParameters.copyInto(saved, model.parameters());
    } catch (IllegalArgumentException e) {
      String hidden = saved.description().get("hidden");
      throw new IllegalArgumentException("cannot initialise from " + dir + ": " + e.getMessage()
          + (hidden == null ? "" : " (it was saved with hidden layers " + hidden + ")"), e);
    }
  }

  /**
   * The saved model in {@code dir} to start a job from: checked as {@link ModelFiles#load} checks it,
   * and every value finite (the format keeps a NaN; a job would only diverge from it). An error
   * names the directory.
   */
  public static ModelSnapshot load(java.nio.file.Path dir) {
    dir = dir.toAbsolutePath().normalize();
    ModelSnapshot saved;
    try {
      saved = ModelFiles.load(dir);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("cannot initialise from " + dir + ": " + e.getMessage(), e);
    }
    for (var p : saved.parameters()) {
      int at = NumericChecks.firstNonFinite(p.values());
      if (at >= 0) {
        throw new IllegalArgumentException("cannot initialise from " + dir + ": " + p.name() + " holds the non-finite value "
            + p.values()[at] + " at index " + at);
      }
    }
    for (TableValues t : saved.tables()) {
      int at = NumericChecks.firstNonFinite(t.values());
      if (at >= 0) {
        throw new IllegalArgumentException("cannot initialise from " + dir + ": " + t.name() + " holds the non-finite value "
            + t.values()[at] + " in the row of id " + t.ids()[at / t.dim()] + " (column " + at % t.dim() + ")");
      }
    }
    return saved;
  }
}
