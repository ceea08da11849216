package io.shardtrain.actors.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SavedModelsTest {
  @TempDir
  Path tmp;

  @Test
  void aSavedModelWithANonFiniteValueIsRefusedNamingWhereItIs() throws Exception {
    CtrModel model = new CtrModel(3, 2, 1, 100, 1, 0.05f, 0.1f, 0.01f, 64, 7);
    float[] rows = {0.1f, 0.2f, 0.3f, Float.NaN};
    ModelSnapshot s = model.snapshot(null, "ctr", 1, "adagrad", 9, new float[model.machine().denseSize()],
        new long[] {4, 17}, rows);
    Path dir = tmp.resolve("fm");
    ModelFiles.save(dir, s);
    var e = assertThrows(IllegalArgumentException.class, () -> SavedModels.load(tmp.resolve("x/../fm")));
    assertEquals("cannot initialise from " + dir + ": fm.rows holds the non-finite value NaN in the row of id 17"
        + " (column 1)", e.getMessage());
  }

  @Test
  void anMlpJobRefusesAFactorizationMachineAndAModelOfAnUnknownKindNamingBoth() throws Exception {
    CtrModel fm = new CtrModel(3, 2, 1, 100, 1, 0.05f, 0.1f, 0.01f, 64, 7);
    Path dir = tmp.resolve("fm");
    ModelFiles.save(dir, fm.snapshot(null, "ctr", 1, "adagrad", 9, new float[fm.machine().denseSize()],
        new long[] {4}, new float[] {0.1f, 0.2f}));
    Mlp mlp = Mlp.create(CpuBackend.create(1), 4, new int[] {3}, 2, Activation.RELU, 1);
    var e = assertThrows(IllegalArgumentException.class, () -> SavedModels.initFrom(dir, mlp));
    assertEquals("cannot initialise from " + dir + ": it holds a factorization machine (model \"fm\"), and this job"
        + " trains an MLP (model \"mlp\")", e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> SavedModels.requireKind(Map.of("model", "gbdt"), dir, SavedModels.FM, "--dataset ctr"));
    assertEquals("cannot initialise from " + dir + ": it holds a model \"gbdt\", and --dataset ctr trains a"
        + " factorization machine (model \"fm\")", e.getMessage());
    // A description that names no kind is an MLP's.
    SavedModels.requireKind(Map.of(), dir, SavedModels.MLP, "this job");
  }
}
