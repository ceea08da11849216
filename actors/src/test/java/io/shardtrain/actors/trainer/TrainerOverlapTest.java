package io.shardtrain.actors.trainer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.AskPattern;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockLayout;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.Backend;
import io.shardtrain.compute.backend.CpuBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A sync trainer overlaps communication with compute, seen from real blocks: its pushes and pulls
 * reach the last layer's blocks while backward is still differentiating the first layer, and the
 * next step's first layer runs forward on the values of the version just made while the last
 * layer's blocks have not made it yet. A second, scripted member ("ghost") holds each block's
 * barrier until the test lets it close; the trainer's backend stops at two operations until the
 * test has looked at the blocks.
 */
class TrainerOverlapTest {
  private static final Duration TIMEOUT = TrainerRejoinTest.TIMEOUT;
  private static final int HIDDEN = 8;
  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /** Where the trainer's backend stops: reached with the operation's operand, left once released. */
  static final class Gate {
    final CompletableFuture<float[]> reached = new CompletableFuture<>();
    private final CountDownLatch release = new CountDownLatch(1);

    void pass(Tensor operand) throws InterruptedException {
      reached.complete(operand.data().clone());
      if (!release.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) throw new IllegalStateException("never released");
    }

    float[] awaitReached() throws Exception {
      return reached.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    void release() {
      release.countDown();
    }
  }

  /** The gates, found by the shapes of the 10-8-2 model's GEMMs. */
  static final class Gates {
    /** Step 1's {@code dW1 = x^T g}: backward of the first layer, the last that backward does. */
    final Gate firstLayerBackward = new Gate();
    /** Step 2's {@code x W1}: the first layer's forward of the next step. */
    final Gate nextFirstLayerForward = new Gate();
    private int firstLayerForwards;
    private int firstLayerBackwards;

    void onGemm(boolean transA, boolean transB, Tensor b, Tensor c) throws InterruptedException {
      boolean w1 = b.rank() == 2 && b.rows() == TrainerRejoinTest.DIM && b.cols() == HIDDEN;
      if (!transA && !transB && w1 && ++firstLayerForwards == 2) nextFirstLayerForward.pass(b);
      boolean dw1 = c.rank() == 2 && c.rows() == TrainerRejoinTest.DIM && c.cols() == HIDDEN;
      if (transA && !transB && dw1 && ++firstLayerBackwards == 1) firstLayerBackward.pass(b);
    }
  }

  private static Backend gated(Backend cpu, Gates gates) {
    return (Backend) Proxy.newProxyInstance(TrainerOverlapTest.class.getClassLoader(),
        new Class<?>[] {Backend.class}, (proxy, method, args) -> {
          if (method.getName().equals("gemm") || method.getName().equals("gemmReluBackward")) {
            gates.onGemm((Boolean) args[0], (Boolean) args[1], (Tensor) args[4], (Tensor) args[6]);
          } else if (method.getName().equals("gemmBiasRelu")) {
            // A hidden layer's forward, into the rectifier: A B + bias, untransposed.
            gates.onGemm(false, false, (Tensor) args[1], (Tensor) args[3]);
          }
          try {
            return method.invoke(cpu, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void pushesWithTheirPullsLeaveDuringBackwardAndTheNextStepsFirstLayerRunsWhileTheLastLayersPullIsUnanswered()
      throws Exception {
    // The ghost sends no heartbeats: only its stop, not a loaded machine's pauses, may drop it. A
    // cluster's shutdown on a loaded machine can outlast the testkit's default 10 s.
    kit = TrainerRejoinTest.newKit("""
        shardtrain.train.steps = 4
        shardtrain.trainer.failure-timeout = 300s
        akka.actor.testkit.typed.system-shutdown-default = 30s
        """);
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = TrainerRejoinTest.startJob(kit, st, "overlap");
    // dense1.weight (80 floats) is 3 blocks, every other parameter one.
    Map<String, BlockSlice> slices = new HashMap<>();
    for (BlockSlice s : plan.job().layout(plan.model())) slices.put(s.entityId(), s);
    List<String> first = plan.job().blocks().stream().filter(b -> b.startsWith("overlap/dense1.")).toList();
    List<String> last = plan.job().blocks().stream().filter(b -> b.startsWith("overlap/dense2.")).toList();
    assertEquals(4, first.size());
    assertEquals(2, last.size());

    TestProbe<Object> ghost = kit.createTestProbe();
    JobProtocol.Registration ghostJoined = AskPattern.<JobProtocol.Command, StatusReply<JobProtocol.Registration>>ask(
        st.master(), r -> new JobProtocol.RegisterTrainer("ghost", ghost.ref().narrow(), r), TIMEOUT,
        kit.scheduler()).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).getValue();
    Gates gates = new Gates();
    TrainerRejoinTest.Listener listener = new TrainerRejoinTest.Listener();
    st.startTrainer(new Trainer.Setup("t1", st.master(), TrainerRejoinTest.data(), TrainerRejoinTest.data(),
        () -> gated(CpuBackend.create(1), gates), TrainerSettings.create(st.system()), listener));

    // Step 1's backward is at its last layer (the model's first): the last layer's blocks already
    // have the trainer's push and hold its pull for version 1; the first layer's have neither.
    gates.firstLayerBackward.awaitReached();
    Map<String, BlockProtocol.BlockStats> during = statsWhen(st, plan,
        s -> last.stream().allMatch(b -> s.get(b).pushes() == 1 && s.get(b).pendingPulls() == 1));
    for (String b : first) {
      assertEquals(0, during.get(b).pushes(), b);
      assertEquals(0, during.get(b).pendingPulls(), b);
    }
    for (String b : last) assertEquals(0, during.get(b).version(), b);
    gates.firstLayerBackward.release();

    // The ghost closes step 1 on the first layer's blocks only.
    for (String b : first) ghostPush(b, ghostJoined.membershipEpoch());
    // Step 2's first layer runs forward while the last layer's blocks still hold the pull for version 1.
    float[] w1Used = gates.nextFirstLayerForward.awaitReached();
    Map<String, BlockProtocol.BlockStats> ahead = statsWhen(st, plan, s -> true);
    for (String b : first) assertEquals(1, ahead.get(b).version(), b);
    for (String b : last) {
      assertEquals(0, ahead.get(b).version(), b);
      assertEquals(1, ahead.get(b).pendingPulls(), b);
    }
    // ...on the first layer's values of version 1, every one of them.
    float[] w1AtVersion1 = new float[TrainerRejoinTest.DIM * HIDDEN];
    for (String b : first) {
      if (!b.startsWith("overlap/dense1.weight")) continue;
      BlockProtocol.BlockValues v = st.pull(b, 1).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      assertEquals(1, v.version(), b);
      System.arraycopy(v.values(), 0, w1AtVersion1, slices.get(b).offset(), v.values().length);
    }
    assertArrayEquals(w1AtVersion1, w1Used);
    gates.nextFirstLayerForward.release();

    for (String b : last) ghostPush(b, ghostJoined.membershipEpoch());
    ghost.stop(); // the master drops it: the trainer finishes the job alone
    assertEquals(4L, listener.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    for (BlockProtocol.BlockStats s : st.blockStats(plan.job()).toCompletableFuture()
        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      assertEquals(4, s.version(), s.entityId());
      // The trainer's pull requests are its two rounds before step 1 (on joining and on its first
      // task); each step's pull travelled with its push. This test pulled dense1.weight once itself.
      assertEquals(s.entityId().startsWith("overlap/dense1.weight") ? 3 : 2, s.pulls(), s.entityId());
    }
  }

  /** The ghost's step 1 for {@code block}: no data, so it only closes the barrier. */
  private void ghostPush(String block, long membershipEpoch) throws Exception {
    ParameterBlock.entityRef(kit.system(), block).<BlockProtocol.PushAck>askWithStatus(
            r -> new BlockProtocol.PushGradient("ghost", 1, 0, membershipEpoch, 0f, new float[0], 0, null, r), TIMEOUT)
        .toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  /** The blocks' stats by id, once they satisfy {@code condition}. */
  private static Map<String, BlockProtocol.BlockStats> statsWhen(ShardTrain st, ShardTrain.Plan plan,
      Predicate<Map<String, BlockProtocol.BlockStats>> condition) throws Exception {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (true) {
      Map<String, BlockProtocol.BlockStats> byId = new HashMap<>();
      for (BlockProtocol.BlockStats s : st.blockStats(plan.job()).toCompletableFuture()
          .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        byId.put(s.entityId(), s);
      }
      if (condition.test(byId)) return byId;
      if (System.nanoTime() > deadline) throw new IllegalStateException("blocks never got there: " + byId);
      Thread.sleep(20);
    }
  }
}
