package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalCompilationTest {
  @TempDir Path dir;

  @Test
  void startingAnH2JournalHasTheJvmAddTheDirectiveOnce() {
    ActorTestKit kit = ActorTestKit.create("c1", JournalConfig.of(ConfigFactory.parseString(
        "akka.actor.provider = local\nakka.loglevel = WARNING\n"
            + "shardtrain.persistence { journal = h2, schema-timeout = 10s, h2-path = \""
            + dir.resolve("j").toString().replace("\\", "/") + "\" }")));
    try {
      Journal.start(kit.system());
    } finally {
      kit.shutdownTestKit();
    }
    // The JVM answered that it added the directive (HotSpot's parser refuses a malformed one).
    assertTrue(JournalCompilation.inPlace());
    // A second start (another system of this JVM) adds nothing.
    assertEquals(Optional.empty(), JournalCompilation.keepAtC1());
  }

  @Test
  void directiveNamesEveryPatternAndExcludesOnlyC2() {
    assertEquals("[{ match: [\"org/h2*.*\", \"slick*.*\", \"com/zaxxer*.*\", \"akka/persistence/jdbc*.*\"], "
        + "c2: { Exclude: true } }]", JournalCompilation.directive());
  }
}
