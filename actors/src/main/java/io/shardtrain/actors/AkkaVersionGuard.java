package io.shardtrain.actors;

/**
 * Refuses to run on any Akka but 2.8.5. Later 2.8.x releases need a license key and terminate
 * the ActorSystem after 15 minutes without one, which would kill a training job mid-run; the
 * Maven enforcer rule keeps them off the build's classpath, and this check covers a classpath
 * assembled some other way.
 */
public final class AkkaVersionGuard {
  public static final String REQUIRED = "2.8.5";

  private AkkaVersionGuard() {}

  public static String current() {
    return akka.Version.current();
  }

  /** Throws {@link IllegalStateException} naming both versions when the running Akka is not 2.8.5. */
  public static void require() {
    String v = current();
    if (!REQUIRED.equals(v)) {
      throw new IllegalStateException("ShardTrain needs Akka " + REQUIRED + " but Akka " + v
          + " is on the classpath (later 2.8.x need a license key and stop after 15 minutes)");
    }
  }
}
