package io.shardtrain.samples.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The defaults that {@code --help} shows: every setting under {@code shardtrain} in the modules'
 * reference.conf, published as a system property {@code shardtrain.default.<path>} (lists as
 * {@code a,b}) so that an option's description can say {@code ${sys:shardtrain.default.train.lr}}
 * and show the value a run without the flag and without {@code --config} really uses.
 */
final class HelpDefaults {
  private static volatile boolean published;

  private HelpDefaults() {}

  static void publish() {
    if (published) return;
    Config reference = ConfigFactory.defaultReference().getConfig("shardtrain");
    for (Map.Entry<String, ConfigValue> e : reference.entrySet()) {
      Object v = e.getValue().unwrapped();
      String text = v instanceof List<?> list ? list.stream().map(String::valueOf).collect(Collectors.joining(","))
          : String.valueOf(v);
      System.setProperty("shardtrain.default." + e.getKey(), text.isEmpty() ? "none" : text);
    }
    published = true;
  }
}
