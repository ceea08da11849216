package io.shardtrain.samples.cli;

import io.shardtrain.samples.report.SuiteBaseline;
import io.shardtrain.samples.report.SuiteSpread;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code shardtrain bench spread}: each figure's run-to-run spread over several {@code bench suite}
 * runs of one machine, the measure a {@code --tolerance} must stay above.
 */
@Command(name = "spread", mixinStandardHelpOptions = true,
    description = "Each figure's spread, (max - min) / median, over the suite.json files of several "
        + "'bench suite' runs, as a markdown table.")
final class BenchSpreadCommand implements Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;
  @Parameters(arity = "2..*", paramLabel = "SUITE_JSON", description = "suite.json files of runs on one machine.")
  List<Path> files;

  @Override
  public Integer call() throws Exception {
    List<SuiteBaseline> runs = new ArrayList<>();
    for (Path f : files) runs.add(SuiteBaseline.load(f, "run", "a SUITE_JSON of bench spread"));
    SuiteSpread spread = SuiteSpread.of(runs);
    var out = spec.commandLine().getOut();
    out.print(spread.markdown());
    spread.rows().stream().filter(r -> !Double.isNaN(r.spreadPct()))
        .max((a, b) -> Double.compare(a.spreadPct(), b.spreadPct()))
        .ifPresent(r -> out.printf(Locale.ROOT, "%nwidest spread: %s, %.1f%% over %d runs%n", r.name(),
            r.spreadPct(), r.runs()));
    spread.rows().stream().filter(r -> !Double.isNaN(r.worstChangePct()))
        .max((a, b) -> Double.compare(a.worstChangePct(), b.worstChangePct()))
        .ifPresent(r -> out.printf(Locale.ROOT, "worst change between two runs: %s, %.1f%% worse: a --tolerance "
            + "above that marks none of these runs against another%n", r.name(), r.worstChangePct()));
    return 0;
  }
}
