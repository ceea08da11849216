package io.shardtrain.actors.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.shardtrain.persistence.model.ModelSnapshot;
import io.shardtrain.persistence.model.ParameterValues;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A click-through model's saved form, and what a job of it refuses to start from. */
class CtrModelTest {
  private static final Path DIR = Path.of("saved");
  private static final Path ABS = DIR.toAbsolutePath().normalize();
  // 3 fields, 2 dense features, 4 factors: rows of 1 + 4 values.
  private final CtrModel model = new CtrModel(3, 2, 4, 1000, 2, 0.05f, 0.1f, 0.01f, 64, 7);

  private ModelSnapshot saved(CtrModel of, long... ids) {
    float[] dense = new float[of.machine().denseSize()];
    float[] rows = new float[ids.length * of.machine().rowWidth()];
    return of.snapshot("job-1", "ctr", 3, "adagrad", 40, dense, ids, rows);
  }

  @Test
  void aSavedModelOfTheSameShapeIsTakenAndItsDescriptionSaysHowAbsentRowsStart() {
    ModelSnapshot s = saved(model, 1, 999);
    model.checkSaved(s, DIR);
    assertEquals("fm", s.description().get("model"));
    assertEquals("0.01", s.description().get("rowInitStd"));
    assertEquals("3", s.description().get("seed"));
    assertEquals(5, s.table(CtrModel.ROWS).dim());
  }

  @Test
  void anotherShapeOrHashSpaceAnIdOutsideTheSpaceOrAnMlpIsRefusedNamingWhat() {
    CtrModel moreFactors = new CtrModel(3, 2, 8, 1000, 2, 0.05f, 0.1f, 0.01f, 64, 7);
    var e = assertThrows(IllegalArgumentException.class, () -> model.checkSaved(saved(moreFactors, 1), DIR));
    assertEquals("cannot initialise from " + ABS + ": its dense part has " + moreFactors.machine().denseSize()
        + " values, this job's needs " + model.machine().denseSize() + " (it was saved with 2 dense features"
        + " and 8 factors; this job has 2 and 4)", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> model.checkSaved(saved(model, 5, 1000), DIR));
    assertEquals("cannot initialise from " + ABS + ": its row id 1000 is outside this job's id space [0, 1000)"
        + " (shardtrain.train.ctr.hash-space)", e.getMessage());
    CtrModel biggerSpace = new CtrModel(3, 2, 4, 2000, 2, 0.05f, 0.1f, 0.01f, 64, 7);
    e = assertThrows(IllegalArgumentException.class, () -> model.checkSaved(saved(biggerSpace, 5), DIR));
    assertEquals("cannot initialise from " + ABS + ": it was saved with hash space 2000, this job's is 1000"
        + " (shardtrain.train.ctr.hash-space): its rows would belong to other ids", e.getMessage());
    // Other fields, the same values' ids: taken.
    model.checkSaved(saved(new CtrModel(5, 2, 4, 1000, 2, 0.05f, 0.1f, 0.01f, 64, 7), 5), DIR);
    ModelSnapshot mlp = new ModelSnapshot(Map.of("model", "mlp"), 1,
        List.of(new ParameterValues("dense1.weight", new int[] {1}, new float[1])));
    e = assertThrows(IllegalArgumentException.class, () -> model.checkSaved(mlp, DIR));
    assertEquals("cannot initialise from " + ABS + ": it holds an MLP (model \"mlp\"), and this job trains a"
        + " factorization machine (model \"fm\")", e.getMessage());
  }

  @Test
  void checkpointDurabilityIsRefusedForAClickThroughJob() {
    CtrModel.requireExactDurability(io.shardtrain.actors.ps.PsSettings.Durability.EXACT);
    var e = assertThrows(IllegalArgumentException.class,
        () -> CtrModel.requireExactDurability(io.shardtrain.actors.ps.PsSettings.Durability.CHECKPOINT));
    assertEquals("a click-through job needs shardtrain.ps.durability = exact: under checkpoint durability a lost ps"
        + " node rolls its blocks back to a checkpoint, which would not hold its table's rows", e.getMessage());
  }
}
