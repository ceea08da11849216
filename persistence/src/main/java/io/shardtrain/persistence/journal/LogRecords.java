package io.shardtrain.persistence.journal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The bytes of {@link EventLog}'s records: {@code [int length][int CRC32C of the body][body]}, the
 * body an event or a deletion, strings as {@code [int length][UTF-8]}. Nothing here touches a file.
 */
final class LogRecords {
  static final byte EVENT = 1;
  static final byte DELETION = 2;
  /** The length and the checksum before a record's body. */
  static final int HEADER = 8;

  private LogRecords() {}

  /** An event's record: its metadata, then its payload (not copied). */
  static ByteBuffer[] event(EventLog.StoredEvent e) {
    byte[] pid = utf8(e.persistenceId());
    byte[] writer = utf8(e.writerUuid());
    byte[] adapter = utf8(e.adapterManifest());
    byte[] manifest = utf8(e.serializerManifest());
    ByteBuffer meta = ByteBuffer.allocate(1 + 4 * 4 + pid.length + writer.length + adapter.length + manifest.length
        + 8 + 8 + 4);
    meta.put(EVENT);
    putString(meta, pid);
    meta.putLong(e.sequenceNr()).putLong(e.timestamp());
    putString(meta, writer);
    putString(meta, adapter);
    meta.putInt(e.serializerId());
    putString(meta, manifest);
    meta.flip();
    ByteBuffer payload = ByteBuffer.wrap(e.payload());
    return withHeader(meta, payload);
  }

  /** A deletion's record: {@code persistenceId}'s events up to {@code to} are gone; its highest sequence number. */
  static ByteBuffer[] deletion(String persistenceId, long to, long highest) {
    byte[] pid = utf8(persistenceId);
    ByteBuffer body = ByteBuffer.allocate(1 + 4 + pid.length + 16);
    body.put(DELETION);
    putString(body, pid);
    body.putLong(to).putLong(highest);
    body.flip();
    return withHeader(body);
  }

  /** The CRC32C of {@code body}'s remaining bytes, as a record's header holds it. */
  static int checksum(ByteBuffer... body) {
    CRC32C crc = new CRC32C();
    for (ByteBuffer b : body) crc.update(b.duplicate());
    return (int) crc.getValue();
  }

  private static ByteBuffer[] withHeader(ByteBuffer... body) {
    int length = 0;
    for (ByteBuffer b : body) length += b.remaining();
    ByteBuffer header = ByteBuffer.allocate(HEADER).putInt(length).putInt(checksum(body)).flip();
    ByteBuffer[] all = new ByteBuffer[body.length + 1];
    all[0] = header;
    System.arraycopy(body, 0, all, 1, body.length);
    return all;
  }

  /** The event in a record's body, read after its type byte. */
  static EventLog.StoredEvent decodeEvent(ByteBuffer body) {
    String pid = getString(body);
    long seq = body.getLong();
    long timestamp = body.getLong();
    String writer = getString(body);
    String adapter = getString(body);
    int serializerId = body.getInt();
    String manifest = getString(body);
    byte[] payload = new byte[body.remaining()];
    body.get(payload);
    return new EventLog.StoredEvent(pid, seq, timestamp, writer, adapter, serializerId, manifest, payload);
  }

  private static byte[] utf8(String s) {
    return (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
  }

  private static void putString(ByteBuffer b, byte[] s) {
    b.putInt(s.length).put(s);
  }

  static String getString(ByteBuffer b) {
    int n = b.getInt();
    String s = new String(b.array(), b.arrayOffset() + b.position(), n, StandardCharsets.UTF_8);
    b.position(b.position() + n);
    return s;
  }
}
