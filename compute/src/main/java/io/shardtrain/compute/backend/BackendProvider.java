package io.shardtrain.compute.backend;

/**
 * A backend that lives in another module and is found with {@link java.util.ServiceLoader}
 * (a {@code META-INF/services/io.shardtrain.compute.backend.BackendProvider} entry), so that
 * {@code compute} knows nothing of the native libraries behind it. The CUDA backend in
 * {@code compute-cuda} is one.
 *
 * <p>{@link #probe()} must never throw, whatever the machine lacks: it answers whether
 * {@link #create} can work here and why, and should cache that answer.
 */
public interface BackendProvider {

  /** Whether a provider's backend can run on this machine, and why (or why not). */
  record Availability(boolean available, String reason) {
    public static Availability yes(String reason) {
      return new Availability(true, reason);
    }

    public static Availability no(String reason) {
      return new Availability(false, reason);
    }
  }

  /** The name selected by {@code shardtrain.compute.backend}, e.g. {@code cuda}. */
  String name();

  /** Probes the machine once and caches the answer; never throws. */
  Availability probe();

  /**
   * A new backend. Throws {@link IllegalStateException} with a one-line reason when the probe
   * says the backend is unavailable.
   */
  Backend create(int threads);
}
