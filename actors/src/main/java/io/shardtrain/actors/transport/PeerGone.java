package io.shardtrain.actors.transport;

import java.io.IOException;

/**
 * A request that will get no answer because the node it went to is gone: Akka Cluster removed it,
 * or (for a node outside the cluster's members) its bulk connection failed or closed. Whether the
 * request was delivered before is unknown, so only a request that may be repeated should be sent
 * again.
 */
public final class PeerGone extends IOException {
  public PeerGone(String message) {
    super(message);
  }
}
