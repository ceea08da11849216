import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Activation;
import io.shardtrain.compute.nn.GradientStep;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.compute.optim.OptimizerState;
import io.shardtrain.compute.optim.Sgd;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Where the MNIST MLP's SGD update runs, measured in one JVM so that both ways see the same
 * minutes of the host: {@code after}, the two-thread crew's step ({@code GradientStep.of} on a
 * two-thread backend) and then the update of each parameter in its backend's row slices, as the
 * single process ran it before; {@code inside}, the same step updating each hidden layer's rows on
 * the thread that computed them ({@code forwardBackwardUpdate}); and {@code one}, one thread's step
 * and update. The three run in turn, blocks of {@code BLOCK} steps each on random batches of 64,
 * every model its own copy; after {@code WARM_UP} steps of each, it prints each way's median block
 * in ms per step and the median of the rounds' ratios. Not part of the build or the tests.
 *
 * <pre>
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/UpdatePlacement.java [ROUNDS]
 * </pre>
 */
public class UpdatePlacement {
  static final int BATCH = 64, BLOCK = 200, WARM_UP = 6000, BATCHES = 50;
  static final int[] HIDDEN = {512, 256};
  static final float LR = 0.05f;

  /** One way to run a step and its update, on its own model. */
  static final class Way {
    final String name;
    final boolean inside;
    final CpuBackend backend;
    final Mlp model;
    final GradientStep step;
    final List<OptimizerState> states = new ArrayList<>();
    final OptimizerState.Update[] updates;
    final List<Double> blocks = new ArrayList<>();
    final Sgd sgd = new Sgd();

    Way(String name, int threads, boolean inside) {
      this.name = name;
      this.inside = inside;
      backend = CpuBackend.create(threads);
      model = Mlp.create(backend, 784, HIDDEN, 10, Activation.RELU, 7);
      step = GradientStep.of(model, BATCH);
      for (Parameter p : model.parameters()) states.add(OptimizerState.create(sgd, p.size()));
      updates = new OptimizerState.Update[states.size()];
    }

    void run(Tensor x, int[] y) {
      List<Parameter> ps = model.parameters();
      if (inside) {
        for (int i = 0; i < ps.size(); i++) {
          Parameter p = ps.get(i);
          updates[i] = states.get(i).begin(sgd, LR, p.value().data(), p.grad().data(), p.value().cols());
        }
        step.forwardBackwardUpdate(x, y, (i, from, to) -> updates[i].rows(from, to));
        for (OptimizerState.Update u : updates) u.finish();
      } else {
        step.forwardBackward(x, y, p -> { });
        for (int i = 0; i < ps.size(); i++) {
          Parameter p = ps.get(i);
          states.get(i).step(sgd, LR, p.value().data(), p.grad().data(), p.value().cols(), backend::forEachRowSlice);
        }
      }
    }
  }

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
    SplittableRandom r = new SplittableRandom(3);
    Tensor[] xs = new Tensor[BATCHES];
    int[][] ys = new int[BATCHES][BATCH];
    for (int b = 0; b < BATCHES; b++) {
      xs[b] = Tensor.zeros(BATCH, 784);
      float[] d = xs[b].data();
      // Sparse and non-negative, as MNIST's pixels are: about a fifth of them lit.
      for (int i = 0; i < d.length; i++) d[i] = r.nextInt(5) == 0 ? (float) r.nextDouble() : 0f;
      for (int i = 0; i < BATCH; i++) ys[b][i] = r.nextInt(10);
    }
    Way[] ways = {new Way("after", 2, false), new Way("inside", 2, true), new Way("one", 1, false)};
    int next = 0;
    for (Way w : ways) {
      for (int s = 0; s < WARM_UP; s++, next++) w.run(xs[next % BATCHES], ys[next % BATCHES]);
    }
    for (int round = 0; round < rounds; round++) {
      for (Way w : ways) {
        long t0 = System.nanoTime();
        for (int s = 0; s < BLOCK; s++, next++) w.run(xs[next % BATCHES], ys[next % BATCHES]);
        w.blocks.add((System.nanoTime() - t0) / 1e6 / BLOCK);
      }
    }
    double[] insideOverAfter = new double[rounds], afterOverOne = new double[rounds], insideOverOne = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      double after = ways[0].blocks.get(i), inside = ways[1].blocks.get(i), one = ways[2].blocks.get(i);
      insideOverAfter[i] = after / inside;
      afterOverOne[i] = one / after;
      insideOverOne[i] = one / inside;
    }
    for (Way w : ways) {
      System.out.printf(Locale.ROOT, "%-7s median %.4f ms per step (blocks of %d, %d rounds)%n", w.name,
          median(w.blocks.stream().mapToDouble(Double::doubleValue).toArray()), BLOCK, rounds);
    }
    System.out.printf(Locale.ROOT, "speed-ups by round's median: inside over after %.3f, after over one %.3f,"
        + " inside over one %.3f%n", median(insideOverAfter), median(afterOverOne), median(insideOverOne));
    for (Way w : ways) w.backend.close();
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }
}
