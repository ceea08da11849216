package io.shardtrain.actors.transport;

import java.io.IOException;

/**
 * A request that may never get an answer because the node it went to is gone: Akka Cluster
 * removed it, or the bulk connection to it failed or closed. Whether the request was delivered is
 * unknown, so only a request that may be repeated should be sent again.
 */
public final class PeerGone extends IOException {
  public PeerGone(String message) {
    super(message);
  }
}
