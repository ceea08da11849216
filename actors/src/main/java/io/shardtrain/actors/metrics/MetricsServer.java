package io.shardtrain.actors.metrics;

import akka.actor.typed.ActorSystem;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.Executors;

/**
 * Serves a node's meters ({@link NodeMetrics#scrape}) in Prometheus' text format at
 * {@code http://shardtrain.metrics.host:port/metrics}, on one daemon thread of its own: a scrape
 * never runs on an actor's dispatcher. Stops with the ActorSystem.
 */
public final class MetricsServer {
  /** The content type of text format 0.0.4, which every Prometheus server reads. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private final HttpServer server;

  private MetricsServer(HttpServer server) {
    this.server = server;
  }

  /** Serves this node's meters when {@code shardtrain.metrics.port} is set; else nothing. */
  public static Optional<MetricsServer> startIfConfigured(ActorSystem<?> system) {
    NodeMetrics metrics = NodeMetrics.get(system);
    if (!metrics.settings().serves()) return Optional.empty();
    MetricsServer server = start(metrics, metrics.settings().host(), metrics.settings().port());
    system.getWhenTerminated().thenRun(server::stop);
    system.log().info("metrics at http://{}:{}/metrics", metrics.settings().host(), server.port());
    if (!server.server.getAddress().getAddress().isLoopbackAddress()) {
      system.log().warn("the metrics endpoint listens on {}, not loopback: whoever reaches it reads this node's"
          + " meters", server.server.getAddress());
    }
    return Optional.of(server);
  }

  /** Binds {@code host:port} (0: a free port; {@link #port} says which). */
  static MetricsServer start(NodeMetrics metrics, String host, int port) {
    HttpServer http;
    try {
      http = HttpServer.create(new InetSocketAddress(host, port), 16);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve metrics at " + host + ":" + port + ": " + e.getMessage(), e);
    }
    http.createContext("/metrics", exchange -> answer(exchange, metrics));
    http.setExecutor(Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "shardtrain-metrics-" + port);
      t.setDaemon(true);
      return t;
    }));
    http.start();
    return new MetricsServer(http);
  }

  private static void answer(HttpExchange exchange, NodeMetrics metrics) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body = metrics.scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
      boolean head = "HEAD".equals(exchange.getRequestMethod());
      exchange.sendResponseHeaders(200, head ? -1 : body.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    }
  }

  /** The port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  public void stop() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
