import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.Random;

/**
 * The products of a 784-512-256 MLP's two hidden layers at batch 64, one training step's worth, with
 * the rectifier as passes of its own (the bias copied into a layer's output, gemm, relu into another
 * buffer; reluBackward after the input gradient) and as the products' last pass
 * ({@code CpuBackend.gemmBiasRelu}, {@code gemmReluBackward}), alternating in one JVM so that both
 * see the same host: microseconds a step and of it the forward. Not part of the build; the tests only compile it.
 *
 * <pre>
 * mvn -q -o install -DskipTests -pl compute
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/RectifierPasses.java THREADS [ROUNDS]
 * </pre>
 */
public class RectifierPasses {
  public static void main(String[] args) {
    int threads = Integer.parseInt(args[0]);
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    CpuBackend be = CpuBackend.create(threads);
    Random r = new Random(1);
    Tensor x = random(r, 64, 784), w1 = random(r, 784, 512), b1 = random(r, 512);
    Tensor w2 = random(r, 512, 256), b2 = random(r, 256), g2 = random(r, 64, 256);
    Tensor z1 = Tensor.zeros(64, 512), h1 = Tensor.zeros(64, 512), z2 = Tensor.zeros(64, 256), h2 = Tensor.zeros(64, 256);
    Tensor dh1 = Tensor.zeros(64, 512), dh1Gated = Tensor.zeros(64, 512);
    Tensor dw1 = Tensor.zeros(784, 512), dw2 = Tensor.zeros(512, 256);
    int steps = 3000;
    // Two rounds first, not printed: the JIT's.
    for (int round = 0; round < rounds + 2; round++) {
      StringBuilder line = new StringBuilder();
      for (int fused = 0; fused < 2; fused++) {
        long start = System.nanoTime(), forward = 0;
        for (int i = 0; i < steps; i++) {
          long f = System.nanoTime();
          Tensor in2;
          if (fused == 0) {
            fill(z1, b1);
            be.gemm(false, false, 1f, x, w1, 1f, z1);
            be.relu(z1, h1);
            fill(z2, b2);
            be.gemm(false, false, 1f, h1, w2, 1f, z2);
            be.relu(z2, h2);
            in2 = h1;
          } else {
            be.gemmBiasRelu(x, w1, b1, z1);
            be.gemmBiasRelu(z1, w2, b2, z2);
            in2 = z1;
          }
          forward += System.nanoTime() - f;
          be.gemm(true, false, 1f, in2, g2, 0f, dw2);
          if (fused == 0) {
            be.gemm(false, true, 1f, g2, w2, 0f, dh1);
            be.reluBackward(in2, dh1, dh1Gated);
            be.gemm(true, false, 1f, x, dh1Gated, 0f, dw1);
          } else {
            be.gemmReluBackward(false, true, 1f, g2, w2, 0f, dh1, in2);
            be.gemm(true, false, 1f, x, dh1, 0f, dw1);
          }
        }
        double us = (System.nanoTime() - start) / 1e3 / steps;
        line.append(String.format("%s %.1f us a step (forward %.1f)   ", fused == 0 ? "passes" : "fused", us,
            forward / 1e3 / steps));
      }
      if (round >= 2) System.out.println(line.toString().strip());
    }
    be.close();
  }

  private static Tensor random(Random r, int... shape) {
    Tensor t = Tensor.zeros(shape);
    float[] d = t.data();
    for (int i = 0; i < d.length; i++) d[i] = (r.nextFloat() - 0.5f) * 0.1f;
    return t;
  }

  private static void fill(Tensor c, Tensor bias) {
    int n = bias.size();
    float[] o = c.data();
    for (int off = 0; off < o.length; off += n) System.arraycopy(bias.data(), 0, o, off, n);
  }
}
