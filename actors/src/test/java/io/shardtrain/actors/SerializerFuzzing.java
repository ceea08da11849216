package io.shardtrain.actors;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.compute.fuzz.Hostile;
import java.io.NotSerializableException;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Fuzzing of an Akka serializer: the inputs are mutants of messages it wrote (or random bytes),
 * under their own manifest or, now and then, another one's. See {@link Hostile} for the check.
 */
public final class SerializerFuzzing {
  private SerializerFuzzing() {}

  /** What a serializer wrote for one message, under the serializer Akka binds it to. */
  public record Seed(Serialization serialization, int serializer, String manifest, byte[] bytes) {}

  /** Bytes to read under {@code manifest} with serializer {@code serializer}. */
  public record Input(Serialization serialization, int serializer, String manifest, byte[] bytes) {
    @Override
    public String toString() {
      return "'" + manifest + "' " + Hostile.describe(bytes);
    }
  }

  /** Each sample as written by the serializer {@code system} binds it to. */
  public static List<Seed> seeds(ActorSystem<?> system, List<?> samples) {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(system));
    List<Seed> seeds = samples.stream().map(m -> {
      var s = (SerializerWithStringManifest) serialization.findSerializerFor(m);
      // Through Serialization, which sets what a serializer of actor references needs.
      return new Seed(serialization, s.identifier(), s.manifest(m), serialization.serialize(m).get());
    }).toList();
    // Read once before the fuzzing: what a serializer builds on first use is no input's allocation.
    for (Seed seed : seeds) serialization.deserialize(seed.bytes(), seed.serializer(), seed.manifest()).get();
    return seeds;
  }

  public static Arbitrary<Input> inputs(List<Seed> seeds) {
    return Arbitraries.randomValue(r -> {
      Seed seed = seeds.get(r.nextInt(seeds.size()));
      String manifest = r.nextInt(8) == 0 ? seeds.get(r.nextInt(seeds.size())).manifest() : seed.manifest();
      byte[] bytes = r.nextInt(8) == 0 ? Hostile.random(r) : Hostile.mutant(seed.bytes(), r, false);
      return new Input(seed.serialization(), seed.serializer(), manifest, bytes);
    });
  }

  /**
   * Reads {@code in} as Artery and the journals do: a message, or one of {@code allowed} with a message; never more than 1 MiB
   * plus 64 bytes per input byte allocated.
   */
  public static void readsOrRefuses(Input in, List<Class<? extends Throwable>> allowed) {
    Hostile.check(in.bytes(), 1 << 20, 64,
        () -> in.serialization().deserialize(in.bytes(), in.serializer(), in.manifest()).get(), allowed);
  }

  /** As above, for the project's binary serializers, which refuse with a NotSerializableException. */
  public static void readsOrRefuses(Input in) {
    readsOrRefuses(in, List.of(NotSerializableException.class));
  }
}
