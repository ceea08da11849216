package io.shardtrain.samples.cli;

import com.typesafe.config.ConfigException;
import io.shardtrain.actors.config.Spelling;
import io.shardtrain.actors.transport.Asks;
import io.shardtrain.compute.FileTrees;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.data.DataUnavailableException;
import java.io.PrintWriter;
import java.nio.file.FileSystemException;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code shardtrain} command line: one subcommand per way of running ShardTrain. */
@Command(
    name = "shardtrain",
    mixinStandardHelpOptions = true,
    versionProvider = ShardTrainCli.Version.class,
    description = "Distributed deep-learning training on Akka: parameter shards, trainers, a master.",
    subcommands = {LocalCommand.class, ExperimentCommand.class, NodeCommand.class, ClientCommands.Submit.class, ClientCommands.StatusCommand.class,
        ClientCommands.CheckpointNow.class, ClientCommands.SaveModel.class, ClientCommands.CancelJob.class,
        ClientCommands.DeleteJob.class,
        BenchCommand.class, CommandLine.HelpCommand.class})
public final class ShardTrainCli implements java.util.concurrent.Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    // First, before anything uses the common pool (a thread per async callback on 2 cores otherwise).
    Asks.poolAsyncCallbacks();
    // Before the command line and the configuration are read (half a second): the kernels
    // compile meanwhile, and while the data is read after that.
    if (trainsDenseModelOnCpu(args)) CpuBackend.warmUp();
    System.exit(execute(args));
  }

  /**
   * Whether the command line trains a dense model on the CPU in this process ({@code local} or
   * {@code experiment} with neither a CUDA backend nor click-through data named), judged from the
   * words before parsing; a wrong guess costs about a second of one core, nothing else.
   */
  static boolean trainsDenseModelOnCpu(String[] args) {
    if (args.length == 0 || !(args[0].equals("local") || args[0].equals("experiment"))) return false;
    for (String a : args) {
      if (a.contains("cuda") || a.equals("ctr") || a.endsWith("=ctr") || a.contains("criteo:")) return false;
    }
    return true;
  }

  /** Runs the command line and returns its exit code (used by tests). */
  public static int execute(String... args) {
    return execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
  }

  /** Runs the command line with the given output and error writers. */
  public static int execute(PrintWriter out, PrintWriter err, String... args) {
    HelpDefaults.publish();
    CommandLine cl = new CommandLine(new ShardTrainCli());
    giveVersion(cl);
    cl.setOut(out);
    cl.setErr(err);
    cl.setExecutionExceptionHandler(ShardTrainCli::onError);
    cl.setParameterExceptionHandler(ShardTrainCli::onBadArguments);
    return cl.execute(args);
  }

  /** Every command's {@code --version} prints the same line, not only the top command's. */
  private static void giveVersion(CommandLine cl) {
    cl.getCommandSpec().versionProvider(new Version());
    cl.getSubcommands().values().forEach(ShardTrainCli::giveVersion);
  }

  @Override
  public Integer call() {
    // No command is a usage error, as a bad one is: the usage on stderr, and status 2.
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }

  /** A bad flag is one line naming it and where to look, not a page of usage. */
  private static int onBadArguments(CommandLine.ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    String path = cl.getCommandSpec().qualifiedName();
    String guess = "";
    if (e instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      String typed = u.getUnmatched().get(0).split("=", 2)[0];
      List<String> near = Spelling.closest(typed, typed.startsWith("-") ? cl.getCommandSpec().optionsMap().keySet()
          : cl.getSubcommands().keySet());
      if (!near.isEmpty()) guess = "; did you mean " + String.join(" or ", near) + "?";
    }
    cl.getErr().println("shardtrain: error: " + e.getMessage() + guess + " (see '" + path + " --help')");
    cl.getErr().flush();
    return 2;
  }

  /** User errors are one line on stderr and exit code 2; anything else keeps its stack trace. */
  private static int onError(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
    PrintWriter err = cl.getErr();
    Throwable cause = Asks.cause(e);
    if (isUserError(cause)) {
      err.println("shardtrain: error: " + describe(cause));
      err.flush();
      return 2;
    }
    if (bindFailure(e)) {
      err.println("shardtrain: error: cannot listen on a port another program holds (pick another port, or stop"
          + " that program): " + e.getMessage());
      err.flush();
      return 2;
    }
    err.println("shardtrain: internal error: " + e);
    e.printStackTrace(err);
    err.flush();
    return 1;
  }

  /** Whether a listener could not bind its port: a user's choice of port, not a fault of ours. */
  private static boolean bindFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.net.BindException) return true;
    }
    return false;
  }

  /** Our own refusals (bad input, missing data, unusable backend or journal) and unusable paths are user errors. */
  private static boolean isUserError(Throwable e) {
    return e instanceof IllegalArgumentException
        || e instanceof IllegalStateException
        || e instanceof DataUnavailableException
        || e instanceof ConfigException
        || e instanceof FileSystemException;
  }

  /** A user error's line: a file system error that gives no reason says no more than the path, so it is named. */
  static String describe(Throwable e) {
    if (!(e instanceof FileSystemException f) || f.getReason() != null) return e.getMessage();
    return FileTrees.reason(f) + ": " + f.getMessage();
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = ShardTrainCli.class.getPackage().getImplementationVersion();
      return new String[] {"shardtrain " + (v == null ? "dev" : v) + " (Akka " + akka.Version.current() + ")"};
    }
  }
}
