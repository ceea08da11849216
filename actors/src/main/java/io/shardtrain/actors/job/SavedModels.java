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

  /** A description's {@code model} for an MLP; a description that names no kind is an MLP's too. */
  public static final String MLP = "mlp";
  /** A description's {@code model} for a factorization machine (a click-through model). */
  public static final String FM = "fm";

  /**
   * Refuses a saved model whose description names another kind than {@code kind} ({@link #MLP} or
   * {@link #FM}), naming both; {@code wanter} says what would train from it ("this job",
   * "--dataset mnist").
   */
  public static void requireKind(java.util.Map<String, String> description, java.nio.file.Path dir, String kind,
      String wanter) {
    String saved = description.getOrDefault("model", MLP);
    if (!saved.equals(kind)) {
      throw new IllegalArgumentException("cannot initialise from " + dir.toAbsolutePath().normalize() + ": it holds "
          + kindInWords(saved) + ", and " + wanter + " trains " + kindInWords(kind));
    }
  }

  private static String kindInWords(String kind) {
    return switch (kind) {
      case MLP -> "an MLP (model \"mlp\")";
      case FM -> "a factorization machine (model \"fm\")";
      default -> "a model \"" + kind + "\"";
    };
  }

  /**
   * Overwrites {@code model}'s parameters with a saved model's (docs/MODEL-FORMAT.md). Blocks are
   * cut from whole parameters, so the saved model may come from any number of ps nodes or block
   * size; names and shapes must match, and an error names the first that does not.
   */
  public static void initFrom(java.nio.file.Path dir, Mlp model) {
    ModelSnapshot saved = load(dir);
    dir = dir.toAbsolutePath().normalize();
    requireKind(saved.description(), dir, MLP, "this job");
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
