package io.shardtrain.actors.transport;

import io.shardtrain.actors.transport.BulkTransport;
import java.net.InetSocketAddress;

/** A node's bulk channel address ({@link BulkTransport#address()}). */
public record BulkAddress(String host, int port) {
  public BulkAddress {
    if (host == null || host.isBlank()) throw new IllegalArgumentException("bulk address needs a host");
    if (port < 1 || port > 65535) throw new IllegalArgumentException("bulk port must be in 1..65535, got " + port);
  }

  public static BulkAddress of(InetSocketAddress a) {
    return new BulkAddress(a.getHostString(), a.getPort());
  }

  public InetSocketAddress socketAddress() {
    return new InetSocketAddress(host, port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
