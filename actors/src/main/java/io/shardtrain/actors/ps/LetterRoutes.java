package io.shardtrain.actors.ps;

import akka.actor.Address;
import akka.actor.typed.ActorRef;
import io.shardtrain.actors.ps.BlockClient.Delivery;
import io.shardtrain.actors.ps.BlockClient.Result;
import io.shardtrain.actors.ps.BlockProtocol.BlockValues;
import io.shardtrain.actors.ps.BlockProtocol.Command;
import io.shardtrain.actors.transport.BulkAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Where a {@link BlockClient} sends each block's letters: the block's actor and its node's bulk
 * address, as its last pull reply named them. A block without a route is reached through
 * sharding. Only a delivered pull names a route; any other pull outcome, and a push whose letter
 * bounced, forgets it, so the next request goes through sharding and finds the block wherever it
 * is now. A block's home, the node of the actor a pull reply last named, outlives its route: a
 * request through sharding to a node that died is lost until the cluster removes the node, so
 * such a request is sent again when its home is removed. Plain bookkeeping, kept apart so it can
 * be checked without an actor system.
 */
final class LetterRoutes {

  /** A block's actor and the bulk address of its node. */
  record Route(BulkAddress node, ActorRef<Command> block) {}

  /** This node's bulk address (null: the channel is off): a block here is told, not sent letters. */
  private final BulkAddress self;
  private final Map<String, Route> routes = new HashMap<>();
  private final Map<String, Address> homes = new HashMap<>();

  LetterRoutes(BulkAddress self) {
    this.self = self;
  }

  /** Where {@code block}'s letters go, or null: through sharding. */
  Route get(String block) {
    return routes.get(block);
  }

  /** The node of the actor that last answered a pull of {@code block}, or null: not known. */
  Address home(String block) {
    return homes.get(block);
  }

  int size() {
    return routes.size();
  }

  /** After a pull of {@code block}: values naming another node's block give its route; all else forgets it. */
  void afterPull(String block, Result<BlockValues> r) {
    BlockValues v = r.delivery() == Delivery.DELIVERED ? r.value() : null;
    if (v != null && v.block() != null) {
      homes.put(block, v.block().path().address());
    } else if (v != null) {
      homes.remove(block);
    }
    if (self != null && v != null && v.node() != null && v.block() != null && !v.node().equals(self)) {
      routes.put(block, new Route(v.node(), v.block()));
    } else {
      routes.remove(block);
    }
  }

  /** After a push to {@code block}: a bounced letter forgets the route. */
  void afterPush(String block, Delivery delivery) {
    if (delivery == Delivery.BOUNCED) routes.remove(block);
  }
}
