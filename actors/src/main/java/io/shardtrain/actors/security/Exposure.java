package io.shardtrain.actors.security;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Which of a node's listeners anyone beyond this machine may reach in plaintext: those bound to an
 * address that is not loopback (the wildcard included) without TLS. A node prints the one line of
 * {@link #warning} at start.
 */
public final class Exposure {
  private Exposure() {}

  /** One listening port: what it serves, where, and whether it speaks TLS there. */
  public record Listener(String name, InetSocketAddress address, boolean tls) {}

  /** One line naming every listener beyond loopback without TLS; empty when there is none. */
  public static Optional<String> warning(List<Listener> listeners) {
    List<Listener> open = listeners.stream().filter(l -> !l.tls() && !loopback(l.address())).toList();
    if (open.isEmpty()) return Optional.empty();
    return Optional.of("this node listens beyond loopback without TLS: "
        + open.stream().map(l -> l.name() + " " + l.address().getHostString() + ":" + l.address().getPort())
            .collect(Collectors.joining(", "))
        + "; whoever reaches these can join the cluster, hand it letters, call its API or read it "
        + "(shardtrain.security.enabled, docs/OPERATIONS.md section 12)");
  }

  private static boolean loopback(InetSocketAddress a) {
    try {
      InetAddress ip = a.isUnresolved() ? InetAddress.getByName(a.getHostString()) : a.getAddress();
      return ip.isLoopbackAddress();
    } catch (UnknownHostException e) {
      // Cannot tell where it points: say so rather than stay quiet.
      return false;
    }
  }
}
