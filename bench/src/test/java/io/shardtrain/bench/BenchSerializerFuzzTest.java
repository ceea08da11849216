package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.Adapter;
import io.shardtrain.compute.fuzz.Hostile;
import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** {@link BenchSerializer} on hostile bytes: the transport benchmark's messages. */
class BenchSerializerFuzzTest {
  private static ActorSystem<Void> system;
  private static BenchSerializer serializer;
  private static List<Object> samples;

  @BeforeContainer
  static void start() {
    system = ActorSystem.create(Behaviors.empty(), "BenchSerializerFuzzTest");
    serializer = new BenchSerializer((ExtendedActorSystem) Adapter.toClassic(system));
    ActorRef<Object> ref = system.unsafeUpcast();
    samples = List.of(new TransportBenchmark.ArteryBlock(7, new float[] {1, 2, 3, 4}, 1, 2, ref.unsafeUpcast()),
        new TransportBenchmark.BlockLetter(ref.unsafeUpcast(), 3, "127.0.0.1", 25520, ref.unsafeUpcast()),
        new TransportBenchmark.EchoLetter(ref.unsafeUpcast()));
  }

  @AfterContainer
  static void stop() {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
  }

  record Input(String manifest, byte[] bytes) {
    @Override
    public String toString() {
      return "'" + manifest + "' " + Hostile.describe(bytes);
    }
  }

  @Property
  void benchmarkMessagesAreReadOrRefused(@ForAll("inputs") Input in) {
    Hostile.check(in.bytes(), 1 << 20, 64, () -> serializer.fromBinary(in.bytes(), in.manifest()),
        List.of(NotSerializableException.class));
  }

  @Provide
  Arbitrary<Input> inputs() {
    return Arbitraries.randomValue(r -> {
      Object m = samples.get(r.nextInt(samples.size()));
      String manifest = r.nextInt(8) == 0 ? serializer.manifest(samples.get(r.nextInt(samples.size())))
          : serializer.manifest(m);
      return new Input(manifest, r.nextInt(8) == 0 ? Hostile.random(r) : Hostile.mutant(serializer.toBinary(m), r, false));
    });
  }

  @Example
  void floatCountBeyondTheBytesLeftIsRefusedBeforeAllocating() {
    // 12 bytes whose count asks for an array of 2^31 - 1 floats.
    ByteBuffer b = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(7).putInt(0).putInt(Integer.MAX_VALUE);
    long before = Hostile.allocatedBytes();
    NotSerializableException e = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(b.array(), "B"));
    assertTrue(Hostile.allocatedBytes() - before < 1 << 20);
    assertEquals("cannot read a benchmark message 'B': count 2147483647 at 8 exceeds the 0 bytes left", e.getMessage());
  }
}
