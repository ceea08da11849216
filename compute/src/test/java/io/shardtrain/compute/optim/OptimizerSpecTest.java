package io.shardtrain.compute.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.optim.OptimizerSpec.Kind;
import org.junit.jupiter.api.Test;

class OptimizerSpecTest {

  @Test
  void parseMapsEveryNameToItsKindAndOptimizer() {
    assertEquals(Kind.SGD, OptimizerSpec.parse("sgd").kind());
    assertInstanceOf(Sgd.class, OptimizerSpec.parse("sgd").create());

    Momentum momentum = assertInstanceOf(Momentum.class, OptimizerSpec.parse("momentum").create());
    assertFalse(momentum.nesterov());
    assertEquals(0.9f, momentum.momentum());

    OptimizerSpec nesterov = OptimizerSpec.parse("Nesterov");
    assertEquals(Kind.MOMENTUM, nesterov.kind());
    assertTrue(nesterov.nesterov());
    assertEquals("nesterov", nesterov.create().name());

    Adam adam = assertInstanceOf(Adam.class, OptimizerSpec.parse("adam").create());
    assertFalse(adam.decoupled());
    assertEquals(0.9f, adam.beta1());
    assertEquals(0.999f, adam.beta2());
    assertEquals(1e-8f, adam.eps());
    assertEquals(0f, adam.weightDecay());

    Adam adamW = assertInstanceOf(Adam.class, OptimizerSpec.parse(" ADAMW ").create());
    assertTrue(adamW.decoupled());
    assertEquals(0.01f, adamW.weightDecay());
    assertEquals("adamw", adamW.name());

    AdaGrad adaGrad = assertInstanceOf(AdaGrad.class, OptimizerSpec.parse("adagrad").create());
    assertEquals(1e-10f, adaGrad.eps());

    Lars lars = assertInstanceOf(Lars.class, OptimizerSpec.parse("lars").create());
    assertEquals(0.001f, lars.trustCoefficient());
    assertEquals(0.9f, lars.momentum());
  }

  @Test
  void parseRejectsUnknownNamesListingTheValidOnes() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> OptimizerSpec.parse("rmsprop"));
    assertTrue(e.getMessage().contains("'rmsprop'"), e.getMessage());
    for (String valid : new String[] {"sgd", "momentum", "nesterov", "adam", "adamw", "adagrad", "lars"}) {
      assertTrue(e.getMessage().contains(valid), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> OptimizerSpec.parse(null));
    assertThrows(IllegalArgumentException.class, () -> OptimizerSpec.parse(""));
  }

  @Test
  void createdOptimizerCarriesTheSpecsHyperparameters() {
    OptimizerSpec spec = OptimizerSpec.defaults(Kind.MOMENTUM).withMomentum(0.5f).withWeightDecay(0.01f);
    Momentum m = assertInstanceOf(Momentum.class, spec.create());
    assertEquals(0.5f, m.momentum());
    assertEquals(0.01f, m.weightDecay());
    assertEquals(new Sgd(0.2f).weightDecay(),
        ((Sgd) OptimizerSpec.defaults(Kind.SGD).withWeightDecay(0.2f).create()).weightDecay());
  }

  @Test
  void specRejectsOutOfRangeAndContradictoryFields() {
    OptimizerSpec d = OptimizerSpec.defaults(Kind.ADAM);
    assertThrows(IllegalArgumentException.class, () -> d.withWeightDecay(-1f));
    assertThrows(IllegalArgumentException.class, () -> d.withMomentum(1f));
    assertThrows(IllegalArgumentException.class,
        () -> new OptimizerSpec(Kind.ADAM, 0f, false, 1.5f, 0.999f, 1e-8f, 0f, 0.001f, false, 0f));
    // Nesterov only for MOMENTUM with momentum > 0; decoupled decay only for ADAM.
    assertThrows(IllegalArgumentException.class,
        () -> new OptimizerSpec(Kind.SGD, 0f, true, 0.9f, 0.999f, 1e-8f, 0f, 0.001f, false, 0f));
    assertThrows(IllegalArgumentException.class,
        () -> new OptimizerSpec(Kind.MOMENTUM, 0f, true, 0.9f, 0.999f, 1e-8f, 0f, 0.001f, false, 0f));
    assertThrows(IllegalArgumentException.class,
        () -> new OptimizerSpec(Kind.LARS, 0.9f, false, 0.9f, 0.999f, 1e-8f, 0f, 0.001f, true, 0f));
    assertThrows(IllegalArgumentException.class,
        () -> new OptimizerSpec(Kind.LARS, 0.9f, false, 0.9f, 0.999f, 1e-8f, 0f, 0f, false, 0f));
    assertThrows(IllegalArgumentException.class, () -> OptimizerSpec.defaults(null));
  }

  @Test
  void slotCountsMatchTheRules() {
    assertEquals(0, OptimizerSpec.parse("sgd").create().slotCount());
    assertEquals(1, OptimizerSpec.parse("momentum").create().slotCount());
    assertEquals(2, OptimizerSpec.parse("adam").create().slotCount());
    assertEquals(1, OptimizerSpec.parse("adagrad").create().slotCount());
    assertEquals(1, OptimizerSpec.parse("lars").create().slotCount());
  }
}
