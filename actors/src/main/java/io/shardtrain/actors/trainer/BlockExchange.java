package io.shardtrain.actors.trainer;

import akka.actor.typed.javadsl.ActorContext;
import io.shardtrain.actors.ps.BlockClient;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.BlockSlice;
import io.shardtrain.actors.transport.WirePrecision;
import io.shardtrain.compute.data.Batch;
import io.shardtrain.compute.data.BatchReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;

/**
 * What a trainer sends its blocks and takes in from them, through its {@link BlockClient}: a step's
 * pushes (each block's gradient slice as soon as backward produced it, or nothing), each carrying
 * the block's pull, whose values come back with the push's ack (one request and one reply per block
 * and step), their resends, and pull rounds, whose values it writes into the model; and the next
 * step's forward, layer by layer as a round's values arrive. It remembers each block's pulled
 * version, the base version of the next gradient pushed to it, and counts pushes and pulls when
 * they start. Gradients leave in the trainer's wire precision, rounded with {@link ErrorFeedback}.
 */
final class BlockExchange {

  /** A block's answer to a push, as the trainer gets it. */
  record PushAnswer(BlockClient.Pushed reply) implements Trainer.Internal {
    long generation() {
      return reply.request().generation();
    }

    long step() {
      return reply.request().step();
    }

    String block() {
      return reply.request().block();
    }
  }

  /** A block's answer to a pull, as the trainer gets it. */
  record PullAnswer(BlockClient.Pulled reply) implements Trainer.Internal {
    long generation() {
      return reply.request().generation();
    }

    long minVersion() {
      return reply.request().minVersion();
    }

    String block() {
      return reply.request().block();
    }
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final BlockClient<Trainer.Command> client;
  private final TrainerCounts counts;
  private final Logger log;
  private final String trainerId;
  /** Each block's version as last pulled; every block is pulled before the first step. */
  private final Map<String, Long> pulledVersion = new HashMap<>();
  private final WirePrecision precision;
  private final ErrorFeedback feedback;
  private final long resendAfterNanos;

  BlockExchange(ActorContext<Trainer.Command> context, String trainerId, TrainerSettings settings,
      TrainerCounts counts) {
    this.client = new BlockClient<>(context, trainerId, settings.askTimeout(), settings.pullTimeout(),
        PushAnswer::new, PullAnswer::new);
    this.counts = counts;
    this.log = context.getLog();
    this.trainerId = trainerId;
    this.precision = settings.gradientPrecision();
    this.feedback = new ErrorFeedback(precision);
    this.resendAfterNanos = settings.resendAfter().toNanos();
  }

  /**
   * Takes the step after {@code previousStep} on the reader's next batch, or on the batch whose
   * forward already ran ahead (null: none did): the rest of forward, then backward, during which
   * each block's push leaves as soon as backward produced its gradient (last layer first), with
   * the block's pull (sync: for the version this step makes), so a block can answer it the moment
   * it applied the step, while the trainer still differentiates the lower layers.
   */
  StepInFlight train(Session s, TaskLease lease, BatchReader reader, long previousStep, ForwardAhead ahead) {
    long t0 = System.nanoTime();
    long cpu0 = cpuTime();
    Batch batch;
    if (ahead != null) {
      batch = ahead.batch();
    } else {
      batch = nextBatch(s, lease, reader);
      s.model().beginForward(batch);
    }
    long step = previousStep + 1;
    StepInFlight st = StepInFlight.training(step, batch.size(), lease, batch.positionAfter().offset(),
        new PullRound(s.model().blocks(), s.lockstep() ? step : 0), nextForward(s));
    float loss = s.model().finishForwardBackward(batch, p -> {
      for (BlockSlice slice : s.model().slicesOf(p)) {
        String block = slice.entityId();
        st.gradient(block, () -> feedback.compensate(block, TrainerModel.gradientOf(p, slice)));
        startPush(s, st, block);
      }
    });
    st.computed(loss, t0, System.nanoTime(), cpuTime() - cpu0);
    return st;
  }

  /** Takes the sync step after {@code previousStep} without data: an empty push to every block, each with its pull. */
  StepInFlight withoutData(Session s, long previousStep) {
    long step = previousStep + 1;
    StepInFlight st = StepInFlight.withoutData(step, new PullRound(s.model().blocks(), step), nextForward(s));
    // Nothing to compute: the step's pushes leave at once.
    long now = System.nanoTime();
    st.computed(Float.NaN, now, now, 0);
    for (String block : s.model().blocks()) {
      st.nothing(block);
      startPush(s, st, block);
    }
    return st;
  }

  /**
   * Runs the next step's forward through the layers whose blocks have all arrived in {@code st}'s
   * round, first reading the next batch of {@code reader}. Only for a trainer whose next step
   * trains on that reader, and only while the round still waits for some block: the layers its
   * last block completes run when the next step starts.
   */
  void forwardAhead(Session s, StepInFlight st, TaskLease lease, BatchReader reader) {
    ForwardAhead ahead = st.ahead();
    List<Integer> layers = ahead.takeRunnable();
    if (layers.isEmpty()) return;
    long t0 = System.nanoTime();
    long cpu0 = cpuTime();
    if (!ahead.begun()) {
      Batch batch = nextBatch(s, lease, reader);
      s.model().beginForward(batch);
      ahead.begun(batch);
    }
    for (int layer : layers) s.model().forwardLayer(layer);
    ahead.ran(System.nanoTime() - t0, cpuTime() - cpu0, st.awaitsAnyPush());
  }

  static Batch nextBatch(Session s, TaskLease lease, BatchReader reader) {
    // A batch ends where a block that already holds examples of this task stops holding them.
    return reader.next(lease.batchLimit(reader.position().offset(), s.job().batch()));
  }

  private static ForwardAhead nextForward(Session s) {
    return new ForwardAhead(new LayerReadiness(s.model().blocksByLayer()));
  }

  /** This thread's CPU time: compute that takes longer than that waited for a core. 0 where the JVM cannot tell. */
  static long cpuTime() {
    return Math.max(0, THREADS.getCurrentThreadCpuTime());
  }

  /** Sends the step's push to {@code block} with the pull of the round's version, which comes back with its ack. */
  private void startPush(Session s, StepInFlight st, String block) {
    counts.pushStarted();
    counts.pullStarted();
    resendPush(s, st, block);
  }

  /**
   * Sends the step's push to {@code block} (again): the same values under the same (trainer, step)
   * key, asking for the block's values with the ack while the round still waits for them.
   */
  void resendPush(Session s, StepInFlight st, String block) {
    StepInFlight.PendingPush p = st.pending(block);
    long valuesFrom = st.pulls().awaits(block) ? st.pulls().minVersion() : BlockClient.PushRequest.NO_VALUES;
    client.push(new BlockClient.PushRequest(block, st.step(), pulledVersion.get(block), s.membershipEpoch(),
        p.weight(), p.values(), s.generation(), st.markOf(p), precision, valuesFrom));
  }

  /**
   * Sends again each of {@code st}'s pushes and pulls whose block lags the step's other answers
   * ({@link StepInFlight#overdue}): through sharding, unless a letter route is known, whose stopped
   * block bounces the letter there; none to a block whose node the cluster holds unreachable.
   */
  void sendOverdueAgain(Session s, StepInFlight st) {
    List<String> late = client.answerable(st.overdue(System.nanoTime(), resendAfterNanos));
    if (late.isEmpty()) return;
    log.info("trainer {}: step {}: no answer from {} while the step's other blocks answered; sent again", trainerId,
        st.step(), late);
    for (String block : late) {
      if (st.awaitsPush(block)) {
        resendPush(s, st, block);
      } else {
        client.pull(new BlockClient.PullRequest(block, st.pulls().minVersion(), s.generation()));
      }
    }
  }

  /** The same for a pull round outside a step (after a registration or rollback). */
  void sendOverdueAgain(Session s, PullRound round) {
    List<String> late = client.answerable(round.overdue(System.nanoTime(), resendAfterNanos, block -> false));
    if (late.isEmpty()) return;
    log.info("trainer {}: no values of {} at version >= {} while the other blocks answered; pulled again", trainerId,
        late, round.minVersion());
    for (String block : late) client.pull(new BlockClient.PullRequest(block, round.minVersion(), s.generation()));
  }

  /**
   * Takes the values a delivered push's ack brought into {@code st}'s round, as {@link #pulled}
   * takes a pull's; an ack that came without the values the push asked for (the block was not at
   * the round's version when it acknowledged) is followed by a pull. True when the ack brought
   * one of the round's blocks.
   */
  boolean pulledWithAck(Session s, StepInFlight st, PushAnswer m) {
    PullRound round = st.pulls();
    if (!round.pulledBy(m.reply().request())) return false;
    if (m.reply().values() == null) {
      client.pull(new BlockClient.PullRequest(m.block(), round.minVersion(), s.generation()));
      return false;
    }
    return take(s, round, m.block(), m.reply().values());
  }

  /** Publishes a replica's values of {@code block} after {@code step} (all-reduce mode); completes with the block's version. */
  CompletionStage<Long> publish(String block, long step, long ringEpoch, long examples, float[] values) {
    return client.publish(block, step, ringEpoch, examples, values);
  }

  /** The job went back to a checkpoint: rounding residuals of the abandoned steps are dropped. */
  void rolledBack() {
    feedback.clear();
  }

  /** What became of a push; a bounced one is already on its way again. */
  BlockClient.Result<BlockProtocol.PushAck> pushOutcome(PushAnswer m) {
    return client.outcome(m.reply());
  }

  /** Pulls every block at version {@code minVersion} or later. */
  PullRound pullAll(Session s, long minVersion) {
    PullRound round = new PullRound(s.model().blocks(), minVersion);
    sendPulls(s, round);
    return round;
  }

  private void sendPulls(Session s, PullRound round) {
    for (String block : s.model().blocks()) sendPull(s, round, block);
  }

  private void sendPull(Session s, PullRound round, String block) {
    counts.pullStarted();
    client.pull(new BlockClient.PullRequest(block, round.minVersion(), s.generation()));
  }

  /**
   * Takes a pull's answer into {@code round}: the values go into the model; a pull that did not
   * deliver is sent again at once (a bounced one the client sent again already). True when it
   * brought one of the round's blocks; false too for an answer to another round.
   */
  boolean pulled(Session s, PullRound round, PullAnswer m) {
    if (m.generation() != s.generation() || m.minVersion() != round.minVersion() || !round.awaits(m.block())) {
      return false;
    }
    BlockClient.Result<BlockProtocol.BlockValues> r = client.outcome(m.reply());
    if (r.delivery() == BlockClient.Delivery.BOUNCED) {
      log.info("trainer {}: pull of {} (version >= {}) bounced ({}), sent again", trainerId, m.block(),
          m.minVersion(), r.reason());
      return false;
    }
    if (r.delivery() != BlockClient.Delivery.DELIVERED) {
      log.warn("trainer {}: pull of {} (version >= {}) failed, {} ({}), retrying", trainerId, m.block(),
          m.minVersion(), r.delivery(), r.reason());
      client.pull(m.reply().request());
      return false;
    }
    return take(s, round, m.block(), r.value());
  }

  /** Writes {@code block}'s values {@code v} into the model and marks them arrived in {@code round}. */
  private boolean take(Session s, PullRound round, String block, BlockProtocol.BlockValues v) {
    s.model().write(v);
    pulledVersion.put(block, v.version());
    return round.received(block, v.version());
  }
}
