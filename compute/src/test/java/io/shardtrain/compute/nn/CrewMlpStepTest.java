package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.ColumnFill;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.backend.CrewStep;
import io.shardtrain.compute.backend.TimedBackend;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A rectified model's step run by a backend's threads together: one thread's bits, the model's contract. */
class CrewMlpStepTest {

  /**
   * Trains a model on a one-thread backend and its twin through the crew's step on {@code threads},
   * the same batches and the same SGD update, and requires every loss and gradient to be equal.
   */
  private static void trainsWithTheBitsOfOneThread(int threads, int in, int[] hidden, int out, int batch) {
    try (CpuBackend one = CpuBackend.create(1); CpuBackend crew = CpuBackend.create(threads)) {
      Mlp reference = Mlp.create(one, in, hidden, out, Activation.RELU, 11);
      Mlp model = Mlp.create(crew, in, hidden, out, Activation.RELU, 11);
      Random r = new Random(5);
      try (GradientStep step = GradientStep.of(model, batch)) {
        assertInstanceOf(CrewMlpStep.class, step);
        for (int s = 0; s < 4; s++) {
          Tensor x = batch(batch, in, r);
          int[] y = labels(batch, out, r);
          float expected = reference.forwardBackward(x, y, p -> { });
          // Layer by layer, as a trainer that pulls its parameters runs it.
          step.beginForward(x);
          for (int l = 0; l < model.denseLayers(); l++) step.forwardLayer(l);
          assertEquals(expected, step.finishForwardBackward(y, p -> { }), "loss of step " + s);
          for (int i = 0; i < model.parameters().size(); i++) {
            Parameter p = model.parameters().get(i);
            assertArrayEquals(reference.parameters().get(i).grad().data(), p.grad().data(),
                p.name() + " gradient of step " + s);
          }
          sgd(reference);
          sgd(model);
        }
        assertEquals(4, ((CrewMlpStep) step).crewSteps(), "steps the crew ran");
      }
    }
  }

  @Test
  void theMnistMlpOnTwoThreadsTrainsWithTheBitsOfOneThread() {
    trainsWithTheBitsOfOneThread(2, 784, new int[] {512, 256}, 10, 64);
  }

  @Test
  void threeHiddenLayersOnTwoThreadsTrainWithTheBitsOfOneThread() {
    // 600 and 520 are three depth blocks, 300 two: every hidden layer's input splits unevenly or evenly.
    trainsWithTheBitsOfOneThread(2, 600, new int[] {520, 300, 300}, 7, 48);
  }

  @Test
  void oneHiddenLayerOnThreeThreadsTrainsWithTheBitsOfOneThread() {
    trainsWithTheBitsOfOneThread(3, 700, new int[] {300}, 10, 100);
  }

  @Test
  void aBatchTooSmallToCutRunsAsTheModelsOwnStepItsCopyWholeOnTheCaller() {
    try (CpuBackend one = CpuBackend.create(1); CpuBackend crew = CpuBackend.create(2)) {
      Mlp reference = mnistMlp(one);
      Mlp model = mnistMlp(crew);
      Random r = new Random(8);
      Tensor x = batch(3, 784, r);
      int[] y = labels(3, 10, r);
      List<String> order = new ArrayList<>();
      List<String> copied = new ArrayList<>();
      try (GradientStep step = GradientStep.of(model, 64)) {
        assertEquals(reference.forwardBackward(x, y, p -> { }), step.forwardBackward(x, y, p -> order.add(p.name())));
        // Given the batch to copy, the caller copies it whole.
        Tensor into = Tensor.zeros(3, 784);
        assertEquals(reference.forwardBackward(x, y, p -> { }),
            step.forwardBackward(into, new ColumnFillOf(x, into, copied), y, p -> { }));
        assertEquals(0, ((CrewMlpStep) step).crewSteps(), "steps the crew ran");
      }
      assertEquals(LAST_LAYER_FIRST, order);
      assertEquals(List.of("[0, 784) on the caller"), copied);
      assertArrayEquals(reference.parameters().get(0).grad().data(), model.parameters().get(0).grad().data());
    }
  }

  @Test
  void eachThreadCopiesTheColumnsItReadsAndTheStepKeepsOneThreadsBits() {
    try (CpuBackend one = CpuBackend.create(1); CpuBackend crew = CpuBackend.create(2)) {
      Mlp reference = mnistMlp(one);
      Mlp model = mnistMlp(crew);
      Random r = new Random(9);
      try (GradientStep step = GradientStep.of(model, 64)) {
        for (int s = 0; s < 2; s++) {
          Tensor source = batch(64, 784, r);
          int[] y = labels(64, 10, r);
          Tensor x = Tensor.zeros(64, 784);
          List<String> copied = Collections.synchronizedList(new ArrayList<>());
          ColumnFillOf fill = new ColumnFillOf(source, x, copied);
          assertEquals(reference.forwardBackward(source, y, p -> { }), step.forwardBackward(x, fill, y, p -> { }),
              "loss of step " + s);
          for (int i = 0; i < model.parameters().size(); i++) {
            assertArrayEquals(reference.parameters().get(i).grad().data(), model.parameters().get(i).grad().data(),
                model.parameters().get(i).name() + " gradient of step " + s);
          }
          // The first layer's 784 rows are four depth blocks of 196, two for each thread, and so are x's columns.
          assertEquals(List.of("[0, 392) on the caller", "[392, 784) on another thread"),
              copied.stream().sorted().toList());
          assertArrayEquals(source.data(), x.data());
        }
        assertEquals(2, ((CrewMlpStep) step).crewSteps(), "steps the crew ran");
      }
    }
  }

  /** Copies columns of {@code source} into {@code x}, noting each range and whether its maker's thread copied it. */
  private static final class ColumnFillOf implements ColumnFill {
    private final Tensor source, x;
    private final List<String> copied;
    private final Thread caller = Thread.currentThread();

    ColumnFillOf(Tensor source, Tensor x, List<String> copied) {
      this.source = source;
      this.x = x;
      this.copied = copied;
    }

    @Override
    public void columns(int from, int to) {
      int cols = x.cols();
      for (int i = 0; i < x.rows(); i++) {
        System.arraycopy(source.data(), i * cols + from, x.data(), i * cols + from, to - from);
      }
      String on = Thread.currentThread() == caller ? "the caller" : "another thread";
      copied.add("[" + from + ", " + to + ") on " + on);
    }
  }

  @Test
  void gradientsAreHandedOutLastLayerFirst() {
    try (CpuBackend crew = CpuBackend.create(2)) {
      Mlp model = mnistMlp(crew);
      Random r = new Random(2);
      List<String> order = new ArrayList<>();
      try (GradientStep step = GradientStep.of(model, 64)) {
        step.forwardBackward(batch(64, 784, r), labels(64, 10, r), p -> order.add(p.name()));
      }
      assertEquals(LAST_LAYER_FIRST, order);
    }
  }

  @Test
  void aLabelOutOfRangeIsRefusedByNameAndTheNextStepRuns() {
    try (CpuBackend one = CpuBackend.create(1); CpuBackend crew = CpuBackend.create(2)) {
      Mlp reference = mnistMlp(one);
      Mlp model = mnistMlp(crew);
      Random r = new Random(4);
      Tensor x = batch(64, 784, r);
      int[] bad = labels(64, 10, r);
      bad[40] = 10;
      try (GradientStep step = GradientStep.of(model, 64)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> step.forwardBackward(x, bad, p -> { }));
        assertTrue(e.getMessage().contains("label 10 at row 40"), e.getMessage());
        int[] y = labels(64, 10, r);
        assertEquals(reference.forwardBackward(x, y, p -> { }), step.forwardBackward(x, y, p -> { }));
        assertEquals(1, ((CrewMlpStep) step).crewSteps(), "steps the crew ran");
      }
    }
  }

  @Test
  void otherActivationsAndOneThreadKeepTheModelsOwnStep() {
    try (CpuBackend one = CpuBackend.create(1); CpuBackend crew = CpuBackend.create(2)) {
      Mlp tanh = Mlp.create(crew, 784, new int[] {512}, 10, Activation.TANH, 1);
      Mlp single = Mlp.create(one, 784, new int[] {512}, 10, Activation.RELU, 1);
      Mlp regression = Mlp.create(crew, 784, new int[] {}, 10, Activation.RELU, 1);
      assertSame(tanh, GradientStep.of(tanh, 64));
      assertSame(single, GradientStep.of(single, 64));
      assertSame(regression, GradientStep.of(regression, 64));
    }
  }

  @Test
  void onATimedBackendTheCrewRunsWithOneThreadsBitsAndTimesEachThreadsPhases() {
    try (CpuBackend one = CpuBackend.create(1); TimedBackend timed = TimedBackend.wrap(CpuBackend.create(2))) {
      Mlp reference = Mlp.create(one, 784, new int[] {512, 256}, 10, Activation.RELU, 3);
      Mlp model = Mlp.create(timed, 784, new int[] {512, 256}, 10, Activation.RELU, 3);
      Random r = new Random(8);
      try (GradientStep step = GradientStep.of(model, 64)) {
        assertInstanceOf(CrewMlpStep.class, step);
        assertNull(timed.crewPhases(), "no step ran yet");
        for (int s = 0; s < 3; s++) {
          Tensor source = batch(64, 784, r);
          int[] y = labels(64, 10, r);
          Tensor x = Tensor.zeros(64, 784);
          assertEquals(reference.forwardBackward(source, y, p -> { }),
              step.forwardBackward(x, new ColumnFillOf(source, x, Collections.synchronizedList(new ArrayList<>())), y,
                  p -> { }), "loss " + s);
          assertArrayEquals(reference.parameters().get(0).grad().data(), model.parameters().get(0).grad().data());
        }
      }
      CrewStep.PhaseTimes phases = timed.crewPhases();
      assertEquals(3, phases.steps());
      assertEquals(0, phases.nanos(0, CrewStep.Phase.START), "the caller's thread has no hand-off");
      for (int t = 0; t < 2; t++) {
        long sum = 0;
        for (CrewStep.Phase phase : CrewStep.Phase.values()) {
          long n = phases.nanos(t, phase);
          if (phase != CrewStep.Phase.START && phase != CrewStep.Phase.MEETINGS) {
            assertTrue(n > 0, "thread " + t + " " + phase + ": " + n);
          }
          sum += n;
        }
        // Every phase of a thread lies within the caller's step.
        assertTrue(sum <= phases.stepNanos(), "thread " + t + ": " + sum + " of " + phases.stepNanos());
        // Stalls are waits of half a millisecond or more, counted within the waits.
        long waits = phases.nanos(t, CrewStep.Phase.START) + phases.nanos(t, CrewStep.Phase.MEETINGS);
        assertTrue(phases.stallNanos()[t] <= waits, "stalls " + phases.stallNanos()[t] + " of waits " + waits);
        assertTrue(phases.stalls()[t] * CrewStep.STALL_NANOS <= phases.stallNanos()[t], "thread " + t);
      }
      assertTrue(timed.snapshot().isEmpty(), "the crew's products do not go through the backend: " + timed.snapshot());
    }
  }

  @Test
  void aCrewStepIsNotTimedUnlessAsked() {
    try (CpuBackend two = CpuBackend.create(2)) {
      assertNull(two.crewStep(784, 512, 256, 10).phaseTimes());
    }
  }

  private static final List<String> LAST_LAYER_FIRST = List.of("dense3.weight", "dense3.bias", "dense2.weight",
      "dense2.bias", "dense1.weight", "dense1.bias");

  /** The MNIST MLP, 784-512-256-10, on {@code backend}. */
  private static Mlp mnistMlp(CpuBackend backend) {
    return Mlp.create(backend, 784, new int[] {512, 256}, 10, Activation.RELU, 3);
  }

  private static void sgd(Mlp model) {
    for (Parameter p : model.parameters()) {
      float[] v = p.value().data(), g = p.grad().data();
      for (int i = 0; i < v.length; i++) v[i] -= 0.05f * g[i];
    }
  }

  private static Tensor batch(int rows, int cols, Random r) {
    Tensor x = Tensor.zeros(rows, cols);
    float[] d = x.data();
    for (int i = 0; i < d.length; i++) d[i] = r.nextFloat();
    return x;
  }

  private static int[] labels(int rows, int classes, Random r) {
    int[] y = new int[rows];
    for (int i = 0; i < rows; i++) y[i] = r.nextInt(classes);
    return y;
  }
}
