package io.shardtrain.compute.backend;

import java.util.Locale;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Chooses a {@link Backend} by name: {@code cpu}, {@code cuda}, or {@code auto}.
 *
 * <p>Backends other than the CPU one come from {@link BackendProvider}s on the class path; a
 * build without {@code compute-cuda} simply has no {@code cuda} provider. {@code auto} takes CUDA
 * when its probe says a GPU is usable and the CPU otherwise; {@code cuda} where it cannot run
 * fails with one line that says why.
 */
public final class Backends {
  private Backends() {}

  /** The backend chosen, and why (for the log line that says which backend runs). */
  public record Choice(Backend backend, String reason) {}

  public static Choice create(String name, int threads) {
    Choice choice = choose(name, threads);
    if (choice.backend() instanceof CpuBackend) CpuBackend.warmUp();
    return choice;
  }

  /**
   * Starts compiling the CPU kernels ({@link CpuBackend#warmUp}) unless {@code name} asks for the
   * CUDA backend, which runs none of them. Call it before reading the data.
   */
  public static void warmUp(String name) {
    if (!"cuda".equalsIgnoreCase(name)) CpuBackend.warmUp();
  }

  private static Choice choose(String name, int threads) {
    switch (name.toLowerCase(Locale.ROOT)) {
      case "cpu":
        return new Choice(CpuBackend.create(threads), "cpu requested");
      case "auto": {
        Optional<BackendProvider> cuda = provider("cuda");
        if (cuda.isEmpty()) {
          return new Choice(CpuBackend.create(threads), "auto: no CUDA backend on the class path, using the CPU");
        }
        BackendProvider.Availability a = cuda.get().probe();
        if (!a.available()) {
          return new Choice(CpuBackend.create(threads), "auto: CUDA unavailable (" + a.reason() + "), using the CPU");
        }
        try {
          return new Choice(cuda.get().create(threads), "auto: " + a.reason());
        } catch (RuntimeException e) {
          return new Choice(CpuBackend.create(threads),
              "auto: CUDA probe passed but start failed (" + e.getMessage() + "), using the CPU");
        }
      }
      case "cuda": {
        BackendProvider cuda = provider("cuda").orElseThrow(() -> new IllegalStateException(
            "backend 'cuda' is not in this build (no compute-cuda on the class path); use --backend cpu or auto"));
        BackendProvider.Availability a = cuda.probe();
        if (!a.available()) {
          throw new IllegalStateException("backend 'cuda' cannot run here: " + a.reason()
              + "; use --backend cpu or auto");
        }
        return new Choice(cuda.create(threads), "cuda requested: " + a.reason());
      }
      default:
        throw new IllegalArgumentException("unknown backend '" + name + "': expected auto, cpu or cuda");
    }
  }

  /** The provider registered under {@code name}, if any is on the class path. */
  public static Optional<BackendProvider> provider(String name) {
    for (BackendProvider p : ServiceLoader.load(BackendProvider.class, Backends.class.getClassLoader())) {
      if (p.name().equalsIgnoreCase(name)) return Optional.of(p);
    }
    return Optional.empty();
  }
}
