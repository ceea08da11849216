package io.shardtrain.actors.ps;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.ActorContext;
import akka.cluster.sharding.typed.javadsl.ClusterSharding;
import akka.cluster.Member;
import akka.cluster.sharding.typed.javadsl.EntityRef;
import akka.cluster.typed.Cluster;
import akka.pattern.StatusReply;
import io.shardtrain.actors.ps.BlockLetters.PublishLetter;
import io.shardtrain.actors.ps.BlockLetters.PullLetter;
import io.shardtrain.actors.ps.BlockLetters.PushLetter;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.ps.BlockProtocol.Publish;
import io.shardtrain.actors.ps.BlockProtocol.Pull;
import io.shardtrain.actors.ps.BlockProtocol.PushAck;
import io.shardtrain.actors.ps.BlockProtocol.PushGradient;
import io.shardtrain.actors.ps.BlockProtocol.TaskMark;
import io.shardtrain.actors.ps.BlockProtocol.ValuesWanted;
import io.shardtrain.actors.ps.BlockProtocol.WithValues;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.actors.transport.BulkAddress;
import io.shardtrain.actors.transport.BulkTransport;
import io.shardtrain.actors.transport.Departures;
import io.shardtrain.actors.transport.PeerGone;
import io.shardtrain.actors.transport.WirePrecision;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * The client side of the block data path: how an actor (a trainer) pushes to and pulls from the
 * parameter blocks, for the actor to use on its own thread. Requests go through Cluster Sharding,
 * inline, until a pull's reply names the block's actor and the bulk address of its node
 * ({@link LetterRoutes}); from then on, with this node's bulk channel on
 * ({@code shardtrain.transport.bulk.enabled}), gradients of at least {@code min-floats} floats and
 * pulls go to that actor by letter ({@link BlockLetters}), and pulled values come back over the
 * channel. A block's side of it is {@link BlockReplies}.
 *
 * <p>Replies come back to the actor as {@link Pushed} and {@link Pulled}, wrapped in its own
 * messages; {@link #outcome(Pushed)} and {@link #outcome(Pulled)} turn them into a typed
 * {@link Result}. The outcome rests on the way the request went (letter or sharding) and the
 * failure's type, never on an error's text. A letter that did not get through (the block moved, or
 * its node is gone or has the channel off) is sent again through sharding right there, so
 * {@link Delivery#BOUNCED} only says that the answer is still to come. So is a request through
 * sharding that was waiting when the cluster removed the block's last known node
 * ({@link LetterRoutes#home}): sent before the removal, it went to that node and is lost.
 *
 * @param <M> the actor's message type
 */
public final class BlockClient<M> {

  /** How a push or pull ended. */
  public enum Delivery {
    /** The block answered. */
    DELIVERED,
    /**
     * A letter did not get through, or the block's node left the cluster while the request waited;
     * the request went again through sharding, and its answer follows.
     */
    BOUNCED,
    /** No answer in time: the block may be moving, or its node dying. */
    TIMED_OUT,
    /** The block answered with an error. */
    REFUSED
  }

  /** An outcome: the block's answer when {@link Delivery#DELIVERED}, else why not (for logs only). */
  public record Result<T>(Delivery delivery, T value, String reason) {
    static <T> Result<T> delivered(T value) {
      return new Result<>(Delivery.DELIVERED, value, null);
    }

    static <T> Result<T> failed(Delivery delivery, String reason) {
      return new Result<>(delivery, null, reason);
    }
  }

  /**
   * A gradient for {@code block} at {@code step}, made in rollback generation {@code generation};
   * the same request again on every retry. {@code values} must not change until it is answered;
   * they travel in {@code precision}, inline or by letter alike. {@code valuesFrom}: the block's
   * values at that version or later come back with the acknowledgement when the block has them by
   * then ({@link Pushed#values()}; {@link #NO_VALUES}: the acknowledgement alone).
   */
  public record PushRequest(String block, long step, long baseVersion, long membershipEpoch, float weight,
      float[] values, long generation, TaskMark mark, WirePrecision precision, long valuesFrom) {
    /** {@code valuesFrom} of a push that wants no values back. */
    public static final long NO_VALUES = -1;

    /** A push acknowledged without values. */
    public PushRequest(String block, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, long generation, TaskMark mark, WirePrecision precision) {
      this(block, step, baseVersion, membershipEpoch, weight, values, generation, mark, precision, NO_VALUES);
    }

    /** A push whose values travel as fp32, acknowledged without values. */
    public PushRequest(String block, long step, long baseVersion, long membershipEpoch, float weight,
        float[] values, long generation, TaskMark mark) {
      this(block, step, baseVersion, membershipEpoch, weight, values, generation, mark, WirePrecision.FP32);
    }

    /** Whether the block's values are to come back with the acknowledgement. */
    public boolean wantsValues() {
      return valuesFrom != NO_VALUES;
    }
  }

  /** A pull of {@code block} at version {@code minVersion} or later, made in rollback generation {@code generation}. */
  public record PullRequest(String block, long minVersion, long generation) {}

  /**
   * The reply to {@code request}: the ack (never a {@link WithValues}), with the block's values when
   * the request wanted them and the block had them (else null), or the failure; {@code byLetter}:
   * the request went by letter.
   */
  public record Pushed(PushRequest request, boolean byLetter, PushAck ack, BlockValues values, Throwable failure) {
    /** The reply {@code reply}, its values taken out of a {@link WithValues}. */
    static Pushed of(PushRequest request, boolean byLetter, PushAck reply, Throwable failure) {
      if (reply instanceof WithValues w) return new Pushed(request, byLetter, w.ack(), w.values(), failure);
      return new Pushed(request, byLetter, reply, null, failure);
    }
  }

  /** The reply to {@code request}: the values, or the failure; {@code byLetter}: the request went by letter. */
  public record Pulled(PullRequest request, boolean byLetter, BlockValues values, Throwable failure) {}

  private static final float[] NO_FLOATS = new float[0];

  private final ActorContext<M> context;
  private final String clientId;
  private final Duration askTimeout;
  private final Duration pullTimeout;
  private final Function<Pushed, M> onPushed;
  private final Function<Pulled, M> onPulled;
  private final ClusterSharding sharding;
  private final Cluster cluster;
  /** This node's bulk channel, or null when it is off. */
  private final BulkTransport bulk;
  private final BulkAddress selfBulk;
  private final Departures departures;
  private final LetterRoutes routes;
  private final Map<String, EntityRef<Command>> entities = new HashMap<>();

  /**
   * A client named {@code clientId} (a push's trainer id) for the actor of {@code context}; its
   * replies reach that actor as {@code onPushed} and {@code onPulled} make them.
   */
  public BlockClient(ActorContext<M> context, String clientId, Duration askTimeout, Duration pullTimeout,
      Function<Pushed, M> onPushed, Function<Pulled, M> onPulled) {
    this.context = context;
    this.clientId = clientId;
    this.askTimeout = askTimeout;
    this.pullTimeout = pullTimeout;
    this.onPushed = onPushed;
    this.onPulled = onPulled;
    this.sharding = ClusterSharding.get(context.getSystem());
    this.cluster = Cluster.get(context.getSystem());
    BulkTransport transport = BulkTransport.get(context.getSystem());
    this.bulk = transport.isEnabled() ? transport : null;
    this.selfBulk = bulk == null ? null : BulkAddress.of(bulk.address());
    this.departures = Departures.get(context.getSystem());
    this.routes = new LetterRoutes(selfBulk);
  }

  /** Sends {@code p}; its reply comes back as {@link Pushed}. */
  public void push(PushRequest p) {
    LetterRoutes.Route route = routes.get(p.block());
    // An empty push (nothing for this block this step) has no floats for the channel to carry.
    if (route != null && p.values().length > 0 && bulk.settings().carries(p.values().length)) {
      // The gradient and the push in one bulk frame, straight to the block's actor.
      context.pipeToSelf(
          bulk.<PushAck>askWithStatus(route.node().socketAddress(),
              replyTo -> new PushLetter(route.block(), selfBulk, gradient(p, null, replyTo)),
              p.values(), 0, p.values().length, askTimeout),
          (ack, failure) -> onPushed.apply(Pushed.of(p, true, ack, failure)));
      return;
    }
    context.pipeToSelf(this.<PushAck>viaSharding(p.block(), replyTo -> gradient(p, p.values(), replyTo), askTimeout),
        (ack, failure) -> onPushed.apply(Pushed.of(p, false, ack, failure)));
  }

  private PushGradient gradient(PushRequest p, float[] values, ActorRef<StatusReply<PushAck>> replyTo) {
    // With this node's bulk address, values that come back name the block's route, as a pull's do.
    ValuesWanted wanted = p.wantsValues() ? new ValuesWanted(p.valuesFrom(), selfBulk) : null;
    return new PushGradient(clientId, p.step(), p.baseVersion(), p.membershipEpoch(), p.weight(), values,
        p.generation(), p.mark(), replyTo, p.precision(), wanted);
  }

  /**
   * Publishes a replica's {@code values} of {@code block} after {@code step} of ring epoch
   * {@code ringEpoch} (all-reduce mode), by letter where the block's route is known, else through
   * sharding; the stage completes with the block's version.
   */
  public CompletionStage<Long> publish(String block, long step, long ringEpoch, long examples, float[] values) {
    LetterRoutes.Route route = routes.get(block);
    if (route != null && bulk.settings().carries(values.length)) {
      return bulk.askWithStatus(route.node().socketAddress(),
          replyTo -> new PublishLetter(route.block(), new Publish(clientId, step, ringEpoch, examples, null, replyTo)),
          values, 0, values.length, askTimeout);
    }
    return viaSharding(block, replyTo -> new Publish(clientId, step, ringEpoch, examples, values, replyTo), askTimeout);
  }

  /** Asks for {@code p}'s values; they come back as {@link Pulled}. */
  public void pull(PullRequest p) {
    LetterRoutes.Route route = routes.get(p.block());
    if (route != null) {
      context.pipeToSelf(
          bulk.<BlockValues>askWithStatus(route.node().socketAddress(),
              replyTo -> new PullLetter(route.block(), new Pull(p.minVersion(), selfBulk, replyTo)),
              NO_FLOATS, 0, 0, pullTimeout),
          (v, failure) -> onPulled.apply(new Pulled(p, true, v, failure)));
      return;
    }
    // With this node's bulk address, a block on another node sends the values by letter.
    context.pipeToSelf(
        this.<BlockValues>viaSharding(p.block(), replyTo -> new Pull(p.minVersion(), selfBulk, replyTo), pullTimeout),
        (v, failure) -> onPulled.apply(new Pulled(p, false, v, failure)));
  }

  /**
   * Asks {@code block}'s entity through sharding; fails with {@link PeerGone} if the cluster removes
   * the block's last known node first, when a request that went there can no longer be answered, or
   * any node while the block's node is not known here (before its first pull answered): that
   * request may have gone to the removed node, and one sent again needlessly is answered by its key.
   */
  private <T> CompletableFuture<T> viaSharding(String block, Function<ActorRef<StatusReply<T>>, Command> request,
      Duration timeout) {
    CompletableFuture<T> reply = new CompletableFuture<>();
    Address home = routes.home(block);
    if (home != null) {
      departures.failIfRemoved(home, reply);
    } else {
      departures.failIfAnyRemoved(reply);
    }
    return Asks.completeOnArrival(entity(block).<T>askWithStatus(request::apply, timeout), reply);
  }

  /**
   * {@code blocks} without those a request sent now could not reach: the blocks whose last known
   * node the cluster holds unreachable, where a request waits for the node's removal, which sends
   * it again ({@link Departures}). Removes them from {@code blocks} and returns it.
   */
  public List<String> answerable(List<String> blocks) {
    if (blocks.isEmpty()) return blocks;
    Set<Address> unreachable = new HashSet<>();
    for (Member m : cluster.state().getUnreachable()) unreachable.add(m.address());
    blocks.removeIf(block -> unreachable.contains(routes.home(block)));
    return blocks;
  }

  private EntityRef<Command> entity(String block) {
    return entities.computeIfAbsent(block, id -> sharding.entityRefFor(ParameterBlock.ENTITY_KEY, id));
  }

  /**
   * The outcome of a push; a bounced letter forgets the block's route and goes again through
   * sharding. Values that came with the ack name the block's route as a pull's do.
   */
  public Result<PushAck> outcome(Pushed m) {
    Result<PushAck> r = classify(m.byLetter(), m.ack(), m.failure());
    routes.afterPush(m.request().block(), r.delivery());
    if (m.values() != null) routes.afterPull(m.request().block(), Result.delivered(m.values()));
    if (r.delivery() == Delivery.BOUNCED) push(m.request());
    return r;
  }

  /**
   * The outcome of a pull. Values from another node's block that came by bulk name where the
   * block's letters go from now on; a failed pull forgets that, and a bounced one goes again
   * through sharding.
   */
  public Result<BlockValues> outcome(Pulled m) {
    Result<BlockValues> r = classify(m.byLetter(), m.values(), m.failure());
    routes.afterPull(m.request().block(), r);
    if (r.delivery() == Delivery.BOUNCED) pull(m.request());
    return r;
  }

  /** How a reply ended, by the way its request went (letter or sharding) and the failure's type only. */
  static <T> Result<T> classify(boolean byLetter, T value, Throwable failure) {
    if (failure == null) return Result.delivered(value);
    String reason = String.valueOf(failure.getMessage());
    // A letter's failure, timeout included: the block's actor may have stopped (it moved), or its
    // node is gone; through sharding, a refusal is the block's own word, unless its node left.
    if (byLetter || failure instanceof PeerGone) return Result.failed(Delivery.BOUNCED, reason);
    if (failure instanceof TimeoutException) return Result.failed(Delivery.TIMED_OUT, reason);
    return Result.failed(Delivery.REFUSED, reason);
  }

  /** The routes, for tests in this package. */
  LetterRoutes routes() {
    return routes;
  }
}
