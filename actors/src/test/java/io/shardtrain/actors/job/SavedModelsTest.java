package io.shardtrain.actors.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.nio.file.Path;
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
}
