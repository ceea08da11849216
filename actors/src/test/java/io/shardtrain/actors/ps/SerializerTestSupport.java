package io.shardtrain.actors.ps;

import akka.actor.ExtendedActorSystem;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.SerializationExtension;
import io.shardtrain.compute.optim.OptimizerSpec;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Shared fixtures of the {@link WireSerializer} and {@link JournalSerializer} tests. */
final class SerializerTestSupport {
  private SerializerTestSupport() {}

  /** Floats whose bits a lossy or big-endian layout would change. */
  static final float[] VALUES = {1.5f, -0f, Float.MIN_VALUE, -3.25e7f, 0.1f};

  static BlockSpec spec() {
    OptimizerSpec adamw = new OptimizerSpec(OptimizerSpec.Kind.ADAM, 0.25f, false, 0.8f, 0.99f, 1e-7f, 0.01f, 0.002f,
        true, 0.3f);
    return new BlockSpec("layer.w", 3, 786_432, 5, adamw, "warmup:10,cosine:1000:0.001", 0.003f,
        BlockSpec.Mode.ASYNC, 7);
  }

  static ExtendedActorSystem classic(ActorTestKit kit) {
    return (ExtendedActorSystem) Adapter.toClassic(kit.system());
  }

  /** {@code message} through the serializer the configuration binds it to, which must be {@code identifier}. */
  static <T> T roundTrip(ActorTestKit kit, T message, int identifier) {
    assertEquals(identifier, SerializationExtension.get(classic(kit)).findSerializerFor(message).identifier(),
        message.getClass().getName() + " is bound to another serializer");
    return kit.serializationTestKit().verifySerialization(message, false);
  }
}
