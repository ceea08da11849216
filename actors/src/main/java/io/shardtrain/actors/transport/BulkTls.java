package io.shardtrain.actors.transport;

import io.shardtrain.actors.security.SecuritySettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * TLS on the bulk channel's connections ({@code shardtrain.security.enabled}), with the node's key
 * and trust stores, the ones Artery uses: both ends present a certificate the cluster's CA signed
 * (mutual authentication), and the handshake completes before a connection carries a byte of a
 * letter, so a peer without such a key is closed before anything of it is read. Hostnames are not
 * checked, as Artery does not: the CA signs cluster nodes only.
 */
final class BulkTls {
  /** How long a peer may take over the handshake before its connection is closed. */
  private static final int HANDSHAKE_TIMEOUT_MS = 10_000;
  /** Bytes handed to the TLS socket per write: several 16 KiB records, fewer calls. */
  private static final int WRITE_CHUNK = 64 << 10;

  private final SSLContext context;

  private BulkTls(SSLContext context) {
    this.context = context;
  }

  /** TLS with {@code settings}' stores, or null when security is off (plain TCP). */
  static BulkTls of(SecuritySettings settings) {
    return settings.enabled() ? new BulkTls(settings.sslContext(true)) : null;
  }

  /** The server side of an accepted connection, after a handshake that authenticated the peer. */
  ByteChannel accept(SocketChannel ch) throws IOException {
    SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(ch.socket(), null, true);
    s.setUseClientMode(false);
    s.setNeedClientAuth(true);
    return handshake(s);
  }

  /** The client side of a connection to {@code peer}, after a handshake that authenticated it. */
  ByteChannel connect(SocketChannel ch, InetSocketAddress peer) throws IOException {
    SSLSocket s = (SSLSocket) context.getSocketFactory()
        .createSocket(ch.socket(), peer.getHostString(), peer.getPort(), true);
    s.setUseClientMode(true);
    return handshake(s);
  }

  private static ByteChannel handshake(SSLSocket s) throws IOException {
    s.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
    s.setSoTimeout(HANDSHAKE_TIMEOUT_MS);
    try {
      s.startHandshake();
    } catch (IOException e) {
      s.close();
      throw new IOException("TLS handshake failed: " + e.getMessage(), e);
    }
    // Letters may be minutes apart: only the handshake has a deadline.
    s.setSoTimeout(0);
    return new TlsChannel(s);
  }

  /**
   * A TLS socket seen as a blocking channel, what {@link BulkFrames} reads and writes. Reads and
   * writes may run on two threads at once, as on a socket channel (a writer and a watcher).
   */
  private static final class TlsChannel implements ByteChannel {
    private final SSLSocket socket;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] readBuf = new byte[WRITE_CHUNK];
    private final byte[] writeBuf = new byte[WRITE_CHUNK];

    TlsChannel(SSLSocket socket) throws IOException {
      this.socket = socket;
      this.in = socket.getInputStream();
      this.out = socket.getOutputStream();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      int n = in.read(readBuf, 0, Math.min(dst.remaining(), readBuf.length));
      if (n > 0) dst.put(readBuf, 0, n);
      return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
      int n = Math.min(src.remaining(), writeBuf.length);
      src.get(writeBuf, 0, n);
      out.write(writeBuf, 0, n);
      return n;
    }

    @Override
    public boolean isOpen() {
      return !socket.isClosed();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
