package io.shardtrain.persistence.journal;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.persistence.typed.DeleteEventsCompleted;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.SnapshotCompleted;
import akka.persistence.typed.SnapshotFailed;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.RetentionCriteria;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.compute.Tensor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Test entity: sums float tensors. Events and snapshots are plain {@link Tensor}s, so they go
 * through the project's TensorSerializer into the journal. Snapshots every 5 events, keeping 2,
 * with events deleted behind them, like a parameter block.
 */
final class TensorSum extends EventSourcedBehavior<TensorSum.Command, Tensor, Tensor> {
  sealed interface Command {}

  /** Adds {@code delta}; replies with the event's sequence number. */
  record Add(Tensor delta, ActorRef<Long> replyTo) implements Command {}

  /** Replies with the current sum and sequence number. */
  record Get(ActorRef<Current> replyTo) implements Command {}

  record Current(Tensor sum, long seqNr) {}

  /**
   * What the test observes from outside: events applied before recovery ended, snapshots, deletions.
   * Snapshot stores complete writes concurrently, so completions may arrive out of order: keep the maximum.
   */
  static final class Observed {
    final AtomicInteger applied = new AtomicInteger();
    final CompletableFuture<Integer> replayed = new CompletableFuture<>();
    final AtomicLong lastSnapshot = new AtomicLong();
    final AtomicLong deletedTo = new AtomicLong();
    final AtomicReference<Throwable> snapshotFailure = new AtomicReference<>();
  }

  private final ActorContext<Command> context;
  private final int width;
  private final Observed observed;

  private TensorSum(ActorContext<Command> context, String id, int width, Observed observed) {
    super(PersistenceId.ofUniqueId(id));
    this.context = context;
    this.width = width;
    this.observed = observed;
  }

  static Behavior<Command> create(String id, int width, Observed observed) {
    return Behaviors.setup(ctx -> new TensorSum(ctx, id, width, observed));
  }

  @Override
  public Tensor emptyState() {
    return Tensor.zeros(width);
  }

  @Override
  public CommandHandler<Command, Tensor, Tensor> commandHandler() {
    return newCommandHandlerBuilder().forAnyState()
        .onCommand(Add.class, (s, c) -> Effect().persist(c.delta())
            .thenReply(c.replyTo(), after -> lastSequenceNumber(context)))
        .onCommand(Get.class, (s, c) -> Effect().reply(c.replyTo(),
            new Current(s.copy(), lastSequenceNumber(context))))
        .build();
  }

  @Override
  public EventHandler<Tensor, Tensor> eventHandler() {
    return newEventHandlerBuilder().forAnyState()
        .onEvent(Tensor.class, (sum, delta) -> {
          observed.applied.incrementAndGet();
          // A new tensor per event: a snapshot is serialized asynchronously and must not change meanwhile.
          Tensor next = sum.copy();
          float[] n = next.data();
          float[] d = delta.data();
          for (int i = 0; i < n.length; i++) n[i] += d[i];
          return next;
        })
        .build();
  }

  @Override
  public SignalHandler<Tensor> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), s -> observed.replayed.complete(observed.applied.get()))
        .onSignal(SnapshotCompleted.class,
            (s, sig) -> observed.lastSnapshot.accumulateAndGet(sig.metadata().sequenceNr(), Math::max))
        .onSignal(SnapshotFailed.class, (s, sig) -> observed.snapshotFailure.compareAndSet(null, sig.getFailure()))
        .onSignal(DeleteEventsCompleted.class,
            (s, sig) -> observed.deletedTo.accumulateAndGet(sig.toSequenceNr(), Math::max))
        .build();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(5, 2).withDeleteEventsOnSnapshot();
  }
}
