package io.shardtrain.compute.backend;

import java.util.Locale;

/** Chooses a {@link Backend} by name: {@code cpu}, {@code cuda}, or {@code auto}. */
public final class Backends {
  private Backends() {}

  /** The backend chosen, and why (for the log line that says which backend runs). */
  public record Choice(Backend backend, String reason) {}

  public static Choice create(String name, int threads) {
    switch (name.toLowerCase(Locale.ROOT)) {
      case "cpu":
        return new Choice(CpuBackend.create(threads), "cpu requested");
      case "auto":
        return new Choice(CpuBackend.create(threads), "auto: no CUDA backend in this build, using the CPU");
      case "cuda":
        throw new IllegalArgumentException("backend 'cuda' is not available in this build; use --backend cpu or auto");
      default:
        throw new IllegalArgumentException("unknown backend '" + name + "': expected auto, cpu or cuda");
    }
  }
}
