package io.shardtrain.actors.sparse;

import akka.actor.NoSerializationVerificationNeeded;
import akka.actor.typed.ActorRef;
import java.util.List;

/** The messages a {@link SparseShard} accepts and answers with. Replies are types, refusals included. */
public final class SparseProtocol {
  private SparseProtocol() {}

  /** What a sparse table shard accepts. */
  public sealed interface Command {}

  /** Makes this entity shard {@code shard} of {@code spec}; idempotent for the same table. */
  public record InitShard(TableSpec spec, int shard, ActorRef<InitReply> replyTo) implements Command {}

  /**
   * The rows of {@code ids} once the shard's version is at least {@code minVersion}; each id is
   * answered once, in the order first asked. A row not stored yet comes back as its initial values.
   */
  public record PullRows(long[] ids, long minVersion, ActorRef<PullReply> replyTo) implements Command {}

  /**
   * A trainer's gradient for rows {@code ids} at {@code step}, computed on rows of version
   * {@code baseVersion}: row {@code ids[k]}'s gradient is {@code grads[k * dim, (k + 1) * dim)};
   * {@code weight} is the examples behind it. Sync: every trainer of the membership pushes to every
   * shard each step: without rows but with its batch's weight when the batch has none of the
   * shard's ids (the step's mean divides by all its examples), with weight 0 when it had no data.
   * The shard journals the arrays as they are: a sender in the same JVM must not change them.
   */
  public record PushRows(String trainerId, long step, long baseVersion, float weight, long[] ids, float[] grads,
      ActorRef<PushReply> replyTo) implements Command {}

  /** The trainers a sync step waits for, as of membership {@code epoch}. */
  public record UpdateMembership(long epoch, List<String> trainers, ActorRef<MembershipReply> replyTo)
      implements Command {
    public UpdateMembership {
      trainers = trainers == null ? null : List.copyOf(trainers);
    }
  }

  /**
   * Rows to start from, before the table trains (a job initialised from a saved model): row
   * {@code ids[k]} takes {@code values[k * dim, (k + 1) * dim)}, its optimizer slots their initial
   * values. Refused once the shard took a step; loading the same rows again changes nothing.
   */
  public record LoadRows(long[] ids, float[] values, ActorRef<LoadReply> replyTo) implements Command {}

  /** Counters and the barrier, for inspection. */
  public record GetStats(ActorRef<ShardStats> replyTo) implements Command {}

  /**
   * Up to {@code limit} stored rows with an id above {@code afterId} (-1: from the first), in
   * ascending id order, their values without optimizer slots: a page of the table for a saved model.
   */
  public record ExportRows(long afterId, int limit, ActorRef<ExportReply> replyTo) implements Command {}

  /** Cluster Sharding moves this shard: waiting pushes and pulls are told to ask again, and it stops. */
  public enum HandOff implements Leave, NoSerializationVerificationNeeded { INSTANCE }

  /** The shard leaves this node's memory as on a hand-off; it recovers where it is next asked for. */
  public sealed interface Leave extends Command permits HandOff, Retire {}

  /** The shard's job finished: it passivates (sharding's own passivation is off). */
  public record Retire() implements Leave {}

  record PullTimedOut(long pullId) implements Command, NoSerializationVerificationNeeded {}

  /** Begin a snapshot (the shard journaled snapshot-every events since its last). */
  enum TakeSnapshot implements Command, NoSerializationVerificationNeeded { INSTANCE }

  /** Whether a shard no trainer takes part in heard nothing for {@code shardtrain.ps.idle-passivation}. */
  enum IdleCheck implements Command, NoSerializationVerificationNeeded { INSTANCE }

  /** Recovery found a snapshot without its rows: fail, so the restart recovers from the snapshot before it. */
  enum Recover implements Command, NoSerializationVerificationNeeded { INSTANCE }

  /** Journal the rows of the snapshot just begun. */
  enum WriteChunks implements Command, NoSerializationVerificationNeeded { INSTANCE }

  /** The answer to {@link InitShard}. */
  public sealed interface InitReply {}

  /** The answer to {@link PullRows}. */
  public sealed interface PullReply {}

  /** The answer to {@link PushRows}; {@code version} is the shard's after it. */
  public sealed interface PushReply {}

  /** The answer to {@link UpdateMembership}. */
  public sealed interface MembershipReply {}

  /** The answer to {@link ExportRows}. */
  public sealed interface ExportReply {}

  /** The answer to {@link LoadRows}. */
  public sealed interface LoadReply {}

  /** The rows of a {@link LoadRows} are stored; the shard holds {@code rows} rows. */
  public record RowsStored(long rows) implements LoadReply {}

  /** The shard is this table's shard, at {@code version}. */
  public record ShardReady(long version) implements InitReply {}

  /**
   * The rows of {@code ids} (deduplicated) at {@code version}: {@code values[k * dim, (k + 1) * dim)}
   * is row {@code ids[k]}.
   */
  public record Rows(String table, int shard, long version, long[] ids, float[] values) implements PullReply {}

  /**
   * A page of shard {@code shard}'s rows at {@code version}, ids ascending: {@code values[k * dim,
   * (k + 1) * dim)} is row {@code ids[k]}; {@code more}: ask again after the last id.
   */
  public record RowsPage(int shard, long version, long[] ids, float[] values, boolean more) implements ExportReply {}

  /** The gradient (and, in sync mode, the step it completed) was applied. */
  public record Applied(long version) implements PushReply {}

  /** Sync: the gradient was taken into the step, which another trainer's push then completed. */
  public record Accepted(long version) implements PushReply {}

  /** This (trainer, step) was received before; nothing was applied again. */
  public record Duplicate(long version) implements PushReply {}

  /** Async: the gradient's base version lags the shard by more than the table's bound; not applied. */
  public record Stale(long version) implements PushReply {}

  /** The membership epoch in force. */
  public record MembershipInForce(long epoch) implements MembershipReply {}

  /** What was wrong with a request. */
  public enum Problem {
    NOT_INITIALISED,
    /** A row id outside {@code [0, rows)}. */
    ID_OUTSIDE_TABLE,
    /** A row id another shard holds. */
    WRONG_SHARD,
    /** Gradient floats that are not {@code dim} per id. */
    WRONG_DIM,
    /** A gradient holding NaN or an infinity. */
    NON_FINITE,
    /** A push for a step the shard is not at yet. */
    AHEAD,
    /** An InitShard with another table's spec, or for another shard. */
    SPEC_MISMATCH,
    /** Blank names, steps below 1, bad weights, no trainer list. */
    MALFORMED,
    /** A pull whose version did not come within the pull timeout. */
    TIMED_OUT,
    /** The shard is moving to another node: ask again. */
    MOVING
  }

  /** The request was refused for {@code problem}, said in words by {@code message}; nothing was applied. */
  public record Refused(Problem problem, String message)
      implements InitReply, PullReply, PushReply, MembershipReply, ExportReply, LoadReply {}

  /**
   * A shard's counters and barrier. {@code rows} stored now; {@code rowsCreated},
   * {@code rowsNotAdmitted} (gradients dropped while their row waited for admission) and
   * {@code rowsExpired} over the shard's whole journal; {@code pushes}, {@code duplicates},
   * {@code refused} and {@code eventsReplayed} since the entity (re)started. {@code pendingStep} is
   * the sync step that has contributions (-1 if none), {@code waitingFor} who it still waits for.
   */
  public record ShardStats(String entityId, boolean initialised, long version, long rows, long bytesAllocated,
      long rowsCreated, long rowsNotAdmitted, long rowsExpired, long pushes, long duplicates, long refused,
      long pendingStep, List<String> waitingFor, long membershipEpoch, long snapshots, long eventsReplayed) {
    public ShardStats {
      waitingFor = List.copyOf(waitingFor);
    }
  }
}
