import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.CpuBackend;

/**
 * Times the first calls of the MNIST MLP's largest products on a fresh JVM: what a training step
 * pays before the JIT has compiled the CPU kernels. Not part of the build; the tests only compile it.
 *
 * <pre>
 * ./mvnw -B -q -pl compute -am package -DskipTests
 * java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/FirstProducts.java [CALLS]
 * </pre>
 *
 * Add {@code -Xint} to see the interpreter alone, {@code -XX:+PrintCompilation} to see when the
 * kernels ({@code MicroKernels::kernel8}, {@code kernel12}) reach the second tier.
 */
public class FirstProducts {
  public static void main(String[] args) {
    int calls = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    Backend backend = CpuBackend.create(1);
    Tensor x = filled(64, 784);
    Tensor w = filled(784, 512);
    Tensor y = Tensor.zeros(64, 512);
    Tensor g = Tensor.zeros(784, 512);
    for (int i = 0; i < calls; i++) {
      long t0 = System.nanoTime();
      backend.gemm(false, false, 1f, x, w, 0f, y);
      long t1 = System.nanoTime();
      backend.gemm(true, false, 1f, x, y, 0f, g);
      long t2 = System.nanoTime();
      System.out.printf("call %d: forward 64x784x512 %.2f ms, weight gradient 784x64x512:tn %.2f ms%n", i,
          (t1 - t0) / 1e6, (t2 - t1) / 1e6);
    }
  }

  private static Tensor filled(int rows, int cols) {
    Tensor t = Tensor.zeros(rows, cols);
    float[] d = t.data();
    for (int i = 0; i < d.length; i++) d[i] = ((i * 31) % 17 - 8) * 0.01f;
    return t;
  }
}
