package io.shardtrain.samples.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports a test names before something binds them (a node's Artery port, a metrics port, a port
 * where nothing listens). A port probed with {@code new ServerSocket(0)} and closed is in the
 * kernel's ephemeral range: while the node starts, any other test's {@code bind(0)} or outgoing
 * connection may take it, and the node then fails to bind. These come from below that range
 * (Linux: 32768-60999), which the kernel never hands out by itself, from a block of its own for
 * each surefire fork, and never twice in one JVM.
 */
public final class FreePorts {
  private static final int FIRST = 20_000;
  private static final int BLOCK = 4_000;
  private static final Set<Integer> given = new HashSet<>();

  private FreePorts() {}

  /** One port, free now. */
  public static int one() {
    return consecutive(1);
  }

  /** The first of {@code count} consecutive ports, all free now (a local cluster's node i serves at P + i). */
  public static synchronized int consecutive(int count) {
    int low = FIRST + BLOCK * forkBlock();
    int start = ThreadLocalRandom.current().nextInt(BLOCK);
    for (int i = 0; i < BLOCK; i++) {
      int first = low + (start + i) % (BLOCK - count + 1);
      if (allFree(first, count)) {
        for (int p = first; p < first + count; p++) given.add(p);
        return first;
      }
    }
    throw new IllegalStateException("no " + count + " consecutive free ports in " + low + ".." + (low + BLOCK - 1));
  }

  private static boolean allFree(int first, int count) {
    for (int p = first; p < first + count; p++) {
      if (given.contains(p) || !bindable(p)) return false;
    }
    return true;
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Surefire's fork number (1, 2, ...; see the parent pom), 0 outside surefire: blocks 0-2. */
  private static int forkBlock() {
    return Integer.getInteger("shardtrain.test.fork", 0) % 3;
  }
}
