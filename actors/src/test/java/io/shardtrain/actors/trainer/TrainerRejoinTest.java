package io.shardtrain.actors.trainer;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.persistence.testkit.PersistenceTestKitPlugin;
import akka.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSpec;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.Dataset;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sync trainers that leave mid-job: one that comes back under the same id gets its task back where
 * it reported, joins the running barrier, and stops at the job's last step; a task whose trainer
 * died after pushing a step to only some blocks is taken over without any block applying an example
 * twice. Either way every block applied exactly the examples the master recorded.
 */
class TrainerRejoinTest {
  static final Duration TIMEOUT = Duration.ofSeconds(60);
  /** One single-node cluster per test: the master keeps one job. */
  ActorTestKit kit;

  static ActorTestKit newKit() {
    return newKit("");
  }

  /** The same, with {@code config} over it. */
  static ActorTestKit newKit(String config) {
    return ActorTestKit.create("TrainerRejoinTest", ConfigFactory.parseString(config).withFallback(ConfigFactory.parseString("""
          akka.actor.provider = cluster
          akka.remote.artery.canonical.port = 0
          akka.remote.artery.canonical.hostname = 127.0.0.1
          akka.cluster.roles = [ps, master, trainer]
          akka.cluster.jmx.multi-mbeans-in-same-jvm = on
          akka.coordinated-shutdown.run-by-jvm-shutdown-hook = off
          # A cluster member's coordinated shutdown on two loaded cores has taken more than the default 10 s.
          akka.actor.testkit.typed.system-shutdown-default = 60s
          shardtrain.transport.bulk.enabled = off
          shardtrain.train { hidden = [8], optimizer = sgd, lr-schedule = constant, batch = 8, steps = 24 }
          """)).withFallback(PersistenceTestKitPlugin.config()).withFallback(PersistenceTestKitSnapshotPlugin.config())
      .withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stop() {
    if (kit != null) kit.shutdownTestKit();
  }

  /**
   * Joins {@code kit}'s node to itself and submits on {@code st} a sync job of 2 trainers over
   * {@link #data()} (the steps as {@code kit}'s configuration says) in blocks of 32 floats.
   */
  static ShardTrain.Plan startJob(ActorTestKit kit, ShardTrain st, String jobId) throws Exception {
    formCluster(kit);
    TrainSettings settings = TrainSettings.fromConfig(kit.system().settings().config());
    ShardTrain.Plan plan = ShardTrain.plan(settings, jobId, DIM, N, 2, BlockSpec.Mode.SYNC, 2, 32, -1);
    st.submit(plan).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    return plan;
  }

  /** Makes the kit's system a cluster of one, up. */
  static void formCluster(ActorTestKit kit) throws InterruptedException {
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (cluster.selfMember().status() != MemberStatus.up()) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("cluster did not form");
      Thread.sleep(50);
    }
  }

  static final int N = 400;
  static final int DIM = 10;

  /** Two classes, separable, 400 examples of 10 features. */
  static Dataset data() {
    float[] x = new float[N * DIM];
    int[] y = new int[N];
    for (int i = 0; i < N; i++) {
      y[i] = i % 2;
      for (int j = 0; j < DIM; j++) x[i * DIM + j] = (float) Math.cos(i * 0.3 + j) + y[i];
    }
    return Dataset.classification(x, DIM, y, 2);
  }

  /** Completes with the trainer's step count; counts steps as they happen. */
  static final class Listener implements StepListener {
    final CompletableFuture<Long> finished = new CompletableFuture<>();
    volatile long lastStep;
    /** While set, each step pauses (in the trainer), so the job is still running when t2 is back. */
    volatile boolean slow;

    @Override
    public void onStep(String trainerId, long step, float loss, int examples, long computeNanos) {
      lastStep = step;
      if (slow) {
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void onFinished(String trainerId, long steps, long pushes, long pulls, long stale) {
      finished.complete(steps);
    }

    @Override
    public void onFailed(String trainerId, String reason) {
      finished.completeExceptionally(new IllegalStateException(reason));
    }
  }

  @Test
  void aTrainerThatComesBackResumesItsTaskAndEndsAtTheJobsLastStepWithEveryExampleAppliedOnce() throws Exception {
    kit = newKit();
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = startJob(kit, st, "rejoin");
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    Dataset train = data();

    Listener l1 = new Listener();
    Listener l2 = new Listener();
    st.startTrainer(setup(st, "t1", train, l1));
    ActorRef<Trainer.Command> t2 = st.startTrainer(setup(st, "t2", train, l2));
    while (l2.lastStep < 6) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("t2 took no steps");
      Thread.sleep(10);
    }
    l1.slow = true;
    t2.tell(Trainer.Stop.INSTANCE);
    long stoppedAfter = l2.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    JobProtocol.JobStatus gone = st.status().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    assertEquals(List.of("t1"), gone.members());

    Listener back = new Listener();
    kit.spawn(Trainer.create(setup(st, "t2", train, back)), "t2-again");
    while (back.lastStep == 0 && !back.finished.isDone()) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("t2 did not come back");
      Thread.sleep(10);
    }
    l1.slow = false;
    long t1Steps = l1.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    long backSteps = back.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    JobProtocol.JobStatus done = st.status().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    List<BlockProtocol.BlockStats> stats = st.blockStats(plan.job()).toCompletableFuture()
        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    System.out.printf("t2 left after %d steps and came back for %d; %d examples reported, blocks applied %s%n",
        stoppedAfter, backSteps, done.examplesReported(),
        stats.stream().map(BlockProtocol.BlockStats::examplesApplied).toList());
    assertTrue(done.done(), done.toString());
    assertEquals(24, t1Steps, "t1 took every step of the job");
    // The job has 24 steps: t2 came back for the rest of them, not for 24 more.
    assertTrue(backSteps > 0 && stoppedAfter + backSteps <= 24, stoppedAfter + " + " + backSteps + " steps");
    for (BlockProtocol.BlockStats b : stats) {
      assertEquals(24, b.version(), b.entityId());
      // Nothing died: every example the master recorded was applied by every block, once.
      assertEquals(done.examplesReported(), b.examplesApplied(), b.entityId());
    }
    assertTrue(done.examplesReported() > 24 * 8, "both trainers trained: " + done.examplesReported());
  }

  @Test
  void aTaskWhoseTrainerDiedAfterPushingToSomeBlocksIsTakenOverWithoutApplyingAnyExampleTwice() throws Exception {
    kit = newKit();
    ShardTrain st = ShardTrain.start(kit.system());
    ShardTrain.Plan plan = startJob(kit, st, "takeover");
    Dataset train = data();
    // "ghost" is a trainer that pushes step 1 of its task to the first block only, then dies.
    akka.actor.testkit.typed.javadsl.TestProbe<Object> ghost = kit.createTestProbe();
    Duration t = Duration.ofSeconds(10);
    akka.actor.typed.javadsl.AskPattern.<JobProtocol.Command, akka.pattern.StatusReply<JobProtocol.Registration>>ask(
        st.master(), r -> new JobProtocol.RegisterTrainer("ghost", ghost.ref().narrow(), r), t, kit.scheduler())
        .toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    Listener l1 = new Listener();
    st.startTrainer(setup(st, "t1", train, l1));
    JobProtocol.Lease lease = null;
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (lease == null) {
      JobProtocol.TaskReply r = akka.actor.typed.javadsl.AskPattern
          .<JobProtocol.Command, akka.pattern.StatusReply<JobProtocol.TaskReply>>ask(st.master(),
              x -> new JobProtocol.RequestTask("ghost", x), t, kit.scheduler())
          .toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).getValue();
      if (r instanceof JobProtocol.Lease l) lease = l;
      if (System.nanoTime() > deadline) throw new IllegalStateException("ghost got no task: " + r);
      Thread.sleep(20);
    }
    String first = plan.job().blocks().get(0);
    int length = st.pull(first, 0).toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).values().length;
    BlockProtocol.TaskMark mark = new BlockProtocol.TaskMark(lease.epoch(), lease.task(), 8);
    BlockProtocol.PushAck ack = ParameterBlock.entityRef(kit.system(), first)
        .<BlockProtocol.PushAck>askWithStatus(r -> new BlockProtocol.PushGradient("ghost", 1, 0, 0, 8f,
            new float[length], 0, mark, r), t)
        .toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    assertTrue(ack.version() <= 1, ack.toString());
    ghost.stop(); // the master watches it: the ghost is dropped, its task settled

    // A new trainer takes the task over: the first block already has its first batch.
    Listener l3 = new Listener();
    st.startTrainer(setup(st, "t3", train, l3));
    assertEquals(24L, l1.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    l3.finished.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    JobProtocol.JobStatus done = st.status().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    List<BlockProtocol.BlockStats> stats = st.blockStats(plan.job()).toCompletableFuture()
        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    System.out.printf("ghost pushed 8 examples of task %d/%d to %s only; %d examples reported, blocks applied %s%n",
        lease.epoch(), lease.task(), first, done.examplesReported(),
        stats.stream().map(BlockProtocol.BlockStats::examplesApplied).toList());
    assertTrue(done.done(), done.toString());
    for (BlockProtocol.BlockStats b : stats) {
      assertEquals(24, b.version(), b.entityId());
      assertEquals(done.examplesReported(), b.examplesApplied(), b.entityId());
    }
    assertTrue(done.examplesReported() > 24 * 8, "t1 and t3 trained: " + done.examplesReported());
  }

  /** Trainers t1 and t2, each step slowed, started on {@code st}'s job; returns once both are past step 2. */
  static List<Listener> twoSlowTrainersPastStepTwo(ShardTrain st) throws InterruptedException {
    Dataset train = data();
    List<Listener> listeners = List.of(new Listener(), new Listener());
    for (int i = 0; i < 2; i++) {
      listeners.get(i).slow = true;
      st.startTrainer(setup(st, "t" + (i + 1), train, listeners.get(i)));
    }
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (listeners.get(0).lastStep < 2 || listeners.get(1).lastStep < 2) {
      if (System.nanoTime() > deadline) throw new IllegalStateException("the trainers took no steps");
      Thread.sleep(10);
    }
    return listeners;
  }

  static Trainer.Setup setup(ShardTrain st, String id, Dataset train, StepListener listener) {
    return new Trainer.Setup(id, st.master(), train, train, () -> CpuBackend.create(1),
        TrainerSettings.create(st.system()), listener);
  }
}
