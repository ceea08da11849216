package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.shardtrain.samples.cli.ShardTrainCli;
import io.shardtrain.samples.cluster.ManagementSettings;
import io.shardtrain.samples.cluster.NodeConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import org.yaml.snakeyaml.Yaml;

/**
 * The Kubernetes manifests in {@code cluster-config/kubernetes}, checked without a cluster: each
 * object is a kind and apiVersion Kubernetes serves, selectors select the pods they mean, the
 * nodes' container arguments parse as a {@code shardtrain node} command whose ports are the
 * containers' ports, and the node configuration they mount makes Cluster Bootstrap look up exactly
 * the node pods, through a service account that may list them.
 */
class KubernetesManifestsTest {
  static final Path DIR = Path.of("..", "cluster-config", "kubernetes");
  static final Map<String, String> API_VERSIONS = Map.of("Namespace", "v1", "ServiceAccount", "v1", "Service", "v1",
      "ConfigMap", "v1", "Secret", "v1", "StatefulSet", "apps/v1", "Deployment", "apps/v1",
      "Role", "rbac.authorization.k8s.io/v1", "RoleBinding", "rbac.authorization.k8s.io/v1");
  static final String NAMESPACE = "shardtrain";
  private static final Pattern VAR = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

  static List<Map<String, Object>> objects = new ArrayList<>();

  @BeforeAll
  static void readManifests() throws Exception {
    try (Stream<Path> files = Files.list(DIR)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        for (Object doc : new Yaml().loadAll(Files.readString(f))) {
          if (doc != null) objects.add(map(doc));
        }
      }
    }
    assertFalse(objects.isEmpty(), "no manifests in " + DIR.toAbsolutePath());
  }

  @Test
  void everyObjectIsAKindKubernetesServesAtItsApiVersionInTheClustersNamespace() {
    Set<String> names = new java.util.HashSet<>();
    for (Map<String, Object> o : objects) {
      String kind = (String) o.get("kind");
      assertEquals(API_VERSIONS.get(kind), o.get("apiVersion"), "apiVersion of " + kind);
      String name = str(o, "metadata", "name");
      assertTrue(name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"), "name " + name + " is not a DNS label");
      assertTrue(names.add(kind + "/" + name), "two " + kind + "s named " + name);
      if (!kind.equals("Namespace")) assertEquals(NAMESPACE, str(o, "metadata", "namespace"), kind + "/" + name);
    }
    assertEquals(List.of("ConfigMap", "Deployment", "Namespace", "Role", "RoleBinding", "Secret", "Service",
        "ServiceAccount", "StatefulSet"), objects.stream().map(o -> (String) o.get("kind")).distinct().sorted().toList());
  }

  @Test
  void workloadSelectorsMatchTheirPodsAndEveryServiceSelectsPodsWithTheNamedPorts() {
    for (Map<String, Object> w : workloads()) {
      Map<String, Object> labels = map(get(w, "spec", "template", "metadata", "labels"));
      Map<String, Object> selector = map(get(w, "spec", "selector", "matchLabels"));
      assertFalse(selector.isEmpty());
      assertTrue(labels.entrySet().containsAll(selector.entrySet()), name(w) + ": selector " + selector
          + " does not select its pods " + labels);
      if (w.get("kind").equals("StatefulSet")) assertNotNull(find("Service", str(w, "spec", "serviceName")));
    }
    for (Map<String, Object> svc : ofKind("Service")) {
      Map<String, Object> selector = map(get(svc, "spec", "selector"));
      List<Map<String, Object>> pods = workloads().stream()
          .filter(w -> map(get(w, "spec", "template", "metadata", "labels")).entrySet().containsAll(selector.entrySet()))
          .toList();
      assertFalse(pods.isEmpty(), name(svc) + " selects no pods");
      for (Object p : list(get(svc, "spec", "ports"))) {
        Object target = map(p).get("targetPort");
        for (Map<String, Object> w : pods) {
          assertTrue(containerPorts(container(w)).containsKey(target), name(svc) + " targets port "
              + target + " that " + name(w) + " does not name");
        }
      }
    }
  }

  @Test
  void nodeContainersRunANodeCommandWhosePortsAreTheContainersPortsAndProbeTheManagementEndpoint() {
    int nodes = 0;
    for (Map<String, Object> w : workloads()) {
      Map<String, Object> c = container(w);
      if (!String.valueOf(c.get("image")).startsWith("shardtrain:")) continue;
      nodes++;
      CommandLine.ParseResult node = parseNodeArgs(c).subcommand();
      assertEquals("node", node.commandSpec().name());
      Map<String, Integer> ports = containerPorts(c);
      assertEquals(ports.get("remoting"), node.matchedOptionValue("--port", -1), name(w) + " --port");
      assertEquals(ports.get("management"), node.matchedOptionValue("--management-port", -1), name(w) + " --management-port");
      assertEquals(ports.get("metrics"), node.matchedOptionValue("--metrics-port", -1), name(w) + " --metrics-port");
      assertEquals(ports.get("grpc"), node.<Integer>matchedOptionValue("--grpc-port", null), name(w) + " --grpc-port");
      assertEquals("$(POD_IP)", argAfter(c, "--host"), name(w) + ": reached at its pod IP");
      assertEquals("/ready", str(c, "readinessProbe", "httpGet", "path"));
      assertEquals("/alive", str(c, "livenessProbe", "httpGet", "path"));
      assertEquals("management", str(c, "readinessProbe", "httpGet", "port"));
      assertEquals("management", str(c, "livenessProbe", "httpGet", "port"));
      // The kubelet waits longer than Akka Management gives a check, or a slow check is a failed probe.
      long checkSeconds = com.typesafe.config.ConfigFactory.load()
          .getDuration("akka.management.health-checks.check-timeout").toSeconds();
      for (String probe : List.of("readinessProbe", "livenessProbe")) {
        assertTrue(((Number) get(c, probe, "timeoutSeconds")).longValue() > checkSeconds, name(w) + " " + probe);
      }
      // The --config file is the ConfigMap's node.conf, mounted where the argument says.
      String conf = argAfter(c, "--config");
      Map<String, Object> mount = list(c.get("volumeMounts")).stream().map(KubernetesManifestsTest::map)
          .filter(m -> conf.startsWith(m.get("mountPath") + "/")).findFirst().orElseThrow();
      Map<String, Object> volume = list(get(w, "spec", "template", "spec", "volumes")).stream()
          .map(KubernetesManifestsTest::map).filter(v -> v.get("name").equals(mount.get("name"))).findFirst().orElseThrow();
      Map<String, Object> cm = find("ConfigMap", str(volume, "configMap", "name"));
      assertTrue(map(cm.get("data")).containsKey(Path.of(conf).getFileName().toString()), conf);
    }
    assertEquals(2, nodes, "node workloads: ps,master and trainers");
  }

  @Test
  void nodeConfigurationBootstrapsThroughTheKubernetesApiFindingExactlyTheNodePods(@TempDir Path dir)
      throws Exception {
    Path conf = dir.resolve("node.conf");
    Files.writeString(conf, (String) map(find("ConfigMap", "shardtrain-node-conf").get("data")).get("node.conf"));
    Map<String, Object> ps = find("StatefulSet", "shardtrain-ps");
    Config c = NodeConfig.build(List.of("ps", "master"), "10.0.0.7", 25520, List.of(), null, conf,
        Map.of("shardtrain.management.port", 8558));
    assertEquals(List.of(), c.getStringList("akka.cluster.seed-nodes"), "Bootstrap joins, not a seed list");
    String boot = "akka.management.cluster.bootstrap.contact-point-discovery.";
    assertEquals("kubernetes-api", c.getString(boot + "discovery-method"));
    ManagementSettings m = ManagementSettings.fromConfig(c);
    // The StatefulSet's pods are enough to form the cluster; trainers join it.
    assertEquals(((Number) get(ps, "spec", "replicas")).intValue(), m.requiredContactPoints());
    String portName = c.getString(boot + "port-name");
    String[] selector = String.format(c.getString("akka.discovery.kubernetes-api.pod-label-selector"),
        c.getString(boot + "service-name")).split("=");
    assertEquals(NAMESPACE, c.getString("akka.discovery.kubernetes-api.pod-namespace"));
    for (Map<String, Object> w : workloads()) {
      boolean node = String.valueOf(container(w).get("image")).startsWith("shardtrain:");
      boolean selected = selector[1].equals(map(get(w, "spec", "template", "metadata", "labels")).get(selector[0]));
      assertEquals(node, selected, name(w) + ": selected by " + String.join("=", selector));
      if (node) assertTrue(containerPorts(container(w)).containsKey(portName), name(w) + " names no port " + portName);
    }
  }

  @Test
  void nodePodsRunAsAServiceAccountBoundToARoleThatListsPods() {
    Map<String, Object> binding = ofKind("RoleBinding").get(0);
    Map<String, Object> role = find("Role", str(binding, "roleRef", "name"));
    Map<String, Object> rule = map(list(role.get("rules")).get(0));
    assertEquals(List.of(""), rule.get("apiGroups"));
    assertEquals(List.of("pods"), rule.get("resources"));
    assertTrue(list(rule.get("verbs")).containsAll(List.of("get", "list", "watch")), rule.toString());
    Map<String, Object> subject = map(list(binding.get("subjects")).get(0));
    assertEquals("ServiceAccount", subject.get("kind"));
    assertEquals(NAMESPACE, subject.get("namespace"));
    assertNotNull(find("ServiceAccount", (String) subject.get("name")));
    for (Map<String, Object> w : workloads()) {
      if (!String.valueOf(container(w).get("image")).startsWith("shardtrain:")) continue;
      assertEquals(subject.get("name"), get(w, "spec", "template", "spec", "serviceAccountName"), name(w));
    }
  }

  @Test
  void everySecretKeyAPodReadsIsInTheSecretAndThePsNodesJournalIsItsUrl() {
    for (Map<String, Object> w : workloads()) {
      for (Object e : list(container(w).get("env"))) {
        Object ref = map(e).get("valueFrom") == null ? null : map(map(e).get("valueFrom")).get("secretKeyRef");
        if (ref == null) continue;
        Map<String, Object> secret = find("Secret", (String) map(ref).get("name"));
        assertTrue(map(secret.get("stringData")).containsKey(map(ref).get("key")), name(w) + ": " + ref);
      }
    }
    Map<String, Object> ps = container(find("StatefulSet", "shardtrain-ps"));
    assertEquals("$(SHARDTRAIN_JOURNAL_URL)", argAfter(ps, "--journal"));
    String url = (String) map(find("Secret", "shardtrain-postgres").get("stringData")).get("url");
    assertTrue(url.startsWith("jdbc:postgresql://"), url);
  }

  @Test
  void theImageTheNodesRunIsTheOneTheDockerfileBuildsFromTheJarsBinShardtrainRuns() throws Exception {
    String dockerfile = Files.readString(Path.of("..", "Dockerfile"));
    String launcher = Files.readString(Path.of("..", "bin", "shardtrain"));
    Matcher tag = Pattern.compile("docker build -t (\\S+) \\.").matcher(dockerfile);
    assertTrue(tag.find(), "the Dockerfile says how to build it");
    Matcher jar = Pattern.compile("JAR=\"\\$ROOT/(\\S+\\.jar)\"").matcher(launcher);
    assertTrue(jar.find());
    assertTrue(dockerfile.contains("COPY " + jar.group(1) + " "), "the Dockerfile copies " + jar.group(1));
    assertTrue(dockerfile.contains("io.shardtrain.samples.cli.ShardTrainCli"));
    for (Map<String, Object> w : workloads()) {
      String image = (String) container(w).get("image");
      if (image.startsWith("shardtrain:")) assertEquals(tag.group(1), image, name(w));
    }
  }

  /** The container's arguments with each $(VAR) checked to be set in its environment, as picocli parses them. */
  private static CommandLine.ParseResult parseNodeArgs(Map<String, Object> c) {
    Map<String, String> env = new HashMap<>();
    for (Object e : list(c.get("env"))) env.put((String) map(e).get("name"), "value-of-" + map(e).get("name"));
    env.put("POD_IP", "10.0.0.7");
    List<String> args = new ArrayList<>();
    for (Object a : list(c.get("args"))) {
      Matcher m = VAR.matcher((String) a);
      StringBuilder out = new StringBuilder();
      while (m.find()) {
        assertTrue(env.containsKey(m.group(1)), "argument " + a + " names $(" + m.group(1) + "), not in the env");
        m.appendReplacement(out, Matcher.quoteReplacement(env.get(m.group(1))));
      }
      m.appendTail(out);
      args.add(out.toString());
    }
    return new CommandLine(new ShardTrainCli()).parseArgs(args.toArray(String[]::new));
  }

  private static String argAfter(Map<String, Object> c, String option) {
    List<Object> args = list(c.get("args"));
    int i = args.indexOf(option);
    assertTrue(i >= 0 && i + 1 < args.size(), "no " + option + " in " + args);
    return (String) args.get(i + 1);
  }

  private static Map<String, Integer> containerPorts(Map<String, Object> c) {
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (Object p : list(c.get("ports"))) ports.put((String) map(p).get("name"), (Integer) map(p).get("containerPort"));
    return ports;
  }

  private static Map<String, Object> container(Map<String, Object> w) {
    List<Object> cs = list(get(w, "spec", "template", "spec", "containers"));
    assertEquals(1, cs.size(), name(w));
    return map(cs.get(0));
  }

  private static List<Map<String, Object>> workloads() {
    return objects.stream().filter(o -> List.of("StatefulSet", "Deployment").contains(o.get("kind"))).toList();
  }

  private static List<Map<String, Object>> ofKind(String kind) {
    return objects.stream().filter(o -> kind.equals(o.get("kind"))).toList();
  }

  private static Map<String, Object> find(String kind, String name) {
    return ofKind(kind).stream().filter(o -> name.equals(str(o, "metadata", "name"))).findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  private static String name(Map<String, Object> o) {
    return o.get("kind") + "/" + str(o, "metadata", "name");
  }

  private static Object get(Map<String, Object> o, String... path) {
    Object cur = o;
    for (String p : path) {
      assertTrue(cur instanceof Map, "no " + String.join(".", path) + " in " + Arrays.toString(path));
      cur = ((Map<?, ?>) cur).get(p);
    }
    return cur;
  }

  private static String str(Map<String, Object> o, String... path) {
    Object v = get(o, path);
    return v == null ? null : v.toString();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return o == null ? Map.of() : (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return o == null ? List.of() : (List<Object>) o;
  }
}
