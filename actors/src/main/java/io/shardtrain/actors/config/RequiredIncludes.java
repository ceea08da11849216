package io.shardtrain.actors.config;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigIncludeContext;
import com.typesafe.config.ConfigIncluder;
import com.typesafe.config.ConfigIncluderFile;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseable;
import java.io.File;

/**
 * A user file's {@code include "other.conf"} (or {@code include file("other.conf")}) of a file that
 * does not exist fails naming it. HOCON skips a missing include quietly, so a job file whose
 * included model settings were moved would train on the defaults. Includes of classpath resources
 * and URLs are left as HOCON has them.
 */
final class RequiredIncludes implements ConfigIncluder, ConfigIncluderFile {
  private final ConfigIncluder fallback;

  RequiredIncludes() {
    this(null);
  }

  private RequiredIncludes(ConfigIncluder fallback) {
    this.fallback = fallback;
  }

  @Override
  public ConfigIncluder withFallback(ConfigIncluder fallback) {
    return this.fallback == fallback ? this : new RequiredIncludes(fallback);
  }

  @Override
  public ConfigObject include(ConfigIncludeContext context, String what) {
    ConfigObject included = fallback.include(context, what);
    if (!included.isEmpty()) return included;
    // Relative to the including file when such a file is there, else a classpath resource.
    ConfigParseable relative = context.relativeTo(what);
    String file = relative == null ? null : relative.origin().filename();
    if (file == null || !exists(file)) throw missing(what);
    return included;
  }

  @Override
  public ConfigObject includeFile(ConfigIncludeContext context, File what) {
    if (!what.isFile()) throw missing(what.getPath());
    return ((ConfigIncluderFile) fallback).includeFile(context, what);
  }

  /** The file, or (a name without an extension) one of the files HOCON would try for it. */
  private static boolean exists(String file) {
    if (new File(file).exists()) return true;
    for (String ext : new String[] {".conf", ".json", ".properties"}) {
      if (new File(file + ext).exists()) return true;
    }
    return false;
  }

  private static ConfigException missing(String what) {
    return new ConfigException.Generic("include \"" + what + "\": no such file beside the file that"
        + " includes it (HOCON would skip it, and the settings it holds with it)");
  }
}
