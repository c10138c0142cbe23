package dev.overlap.jobs;

import dev.overlap.executor.trace.TraceFiles;
import dev.overlap.jobs.cli.ErrorLines;
import dev.overlap.jobs.cli.FatalExit;
import dev.overlap.jobs.cli.InputFooters;
import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.JobCommand;
import dev.overlap.jobs.cli.JobCommands;
import dev.overlap.jobs.cli.JobPaths;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.cli.PhaseProgress;
import dev.overlap.jobs.cli.PreFlight;
import dev.overlap.jobs.cli.ProgressText;
import dev.overlap.jobs.cli.SparkFolders;
import dev.overlap.jobs.cli.StagedOutput;
import dev.overlap.jobs.cli.StagedRecovery;
import dev.overlap.jobs.cli.UsageException;
import dev.overlap.jobs.delta.JobInput;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.io.IOException;
import java.nio.file.Paths;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.ShutdownHookManager;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.SparkHadoopUtil;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The jobs' entry point: {@code <job> [options]}, run through {@code spark-submit.sh}.
 *
 * <pre>
 * generate --scale SF [--output DIR] [--overwrite]        TPC-H lineitem and orders as Parquet
 * etl      [--input DIR [--format delta [--version N]]] [--output DIR] [--overwrite]
 *          [--engine overlap|spark-sql]                   TPC-H Q1 and Q6 over lineitem
 * features [--input DIR [--format delta [--version N]]] [--output DIR] [--overwrite]
 *          [--vocabulary N] [--save-model DIR | --model DIR] [--fit-only]
 *          [--keep-inputs] [--vector-col NAME [--vector-type vector|array<float>|array<double>]]
 *                                                         features of any Parquet, by column type
 * </pre>
 *
 * Without {@code --input}, etl and features run on an embedded default: TPC-H at scale factor 0.01,
 * generated into {@code ./data/} on first use. Without {@code --output}, results go to {@code
 * ./out/<job>}, replaced on each run.
 *
 * <p>Before any work the command line, the master, Spark's local and trace folders, the input (its
 * files' footers too) and the output are checked ({@link JobArgs}, {@link PreFlight}, {@link
 * SparkFolders}, {@link InputFooters}, {@link JobPaths}, {@link Creatable}); the result is built
 * beside the output and replaces it only when complete ({@link StagedOutput}). A failure prints one
 * line on stderr (exit code 2 when the command or the input is at fault, 1 otherwise), with the
 * full exception in the log file the line names. SIGINT and SIGTERM stop the run, delete its
 * staging folder and say what the output holds; so does Spark ending the JVM itself, with a line
 * that says why ({@link FatalExit}).
 */
public final class Main {
  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  public static final String DEFAULT_DATA = JobPaths.DEFAULT_DATA;
  public static final double DEFAULT_SCALE = 0.01;

  /** The shutdown hook runs before Spark's own (Hadoop's priority; Spark's is 40). */
  private static final int SHUTDOWN_PRIORITY = 50;

  private static volatile StagedOutput current;
  private static volatile SparkSession session;
  private static volatile boolean finished;
  private static volatile String jobName = "overlap";
  private static volatile String master = "local[*]";
  private static volatile ErrorLines.Context context = ErrorLines.Context.NONE;

  private Main() {}

  public static void main(String[] args) {
    ShutdownHookManager.get().addShutdownHook(Main::onShutdown, SHUTDOWN_PRIORITY);
    FatalExit.watch();
    int code;
    String job = args.length > 0 ? args[0] : "overlap";
    jobName = job;
    try {
      code = run(args);
    } catch (Throwable t) {
      if (StagedOutput.stopping) {
        // The shutdown hook reports the interruption; wait for it to end the JVM.
        waitForExit();
      }
      clearProgressBar();
      ErrorLines.Line line = ErrorLines.of(t, job, context);
      if (line.usage()) {
        LOG.info("refused: {}", line.text(), t);
        System.err.println("overlap: " + line.text());
      } else {
        LOG.error("{}", line.text(), t);
        System.err.println("overlap: " + line.text() + logNamed("stack trace"));
      }
      code = line.exit();
    }
    finished = true;
    System.exit(code);
  }

  /** Where the run's log is, as the end of a line: {@code (what in FILE)}; empty when unknown. */
  private static String logNamed(String what) {
    String log = System.getProperty("overlap.log.file");
    return log == null ? "" : " (" + what + " in " + log + ")";
  }

  /**
   * Spark's stage progress bar ends with a carriage return and is cleared only when a job ends
   * well: blank it, as Spark does, so that a failure's line starts at the left margin.
   */
  private static void clearProgressBar() {
    PhaseProgress.stop();
    int width = ProgressText.terminalWidth();
    System.err.print("\r" + " ".repeat(Math.max(1, width)) + "\r");
  }

  static int run(String[] args) throws IOException {
    JobArgs a = JobArgs.parse(args);
    JobCommand command = JobCommands.named(a.job);
    SparkConf sparkConf = new SparkConf();
    master = sparkConf.get("spark.master", "local[*]");
    PreFlight.checkMaster(master, sparkConf);
    SparkFolders.check(sparkConf, master);
    Configuration hadoop = SparkHadoopUtil.get().newConfiguration(sparkConf);
    JobPaths paths =
        new JobPaths(hadoop, Paths.get(""), Optional.ofNullable(System.getenv("OVERLAP_HOME")));
    String output = command.writesOutput(a) ? PreFlight.output(a, paths) : null;
    JobCommand.Run job = command.prepare(a, paths, output);
    InputFooters footers = PreFlight.inputFooters(a, paths);
    JobInput.of(a, null).checkSetup(sparkConf);
    context = new ErrorLines.Context(output, footers, master);
    if (!sparkConf.getBoolean("spark.sql.parquet.mergeSchema", false)) {
      footers.partialColumns().ifPresent(w -> System.err.println("overlap: warning: " + w));
    }

    long starting = System.nanoTime();
    SparkSession spark =
        SparkSession.builder()
            .appName("overlap " + a.job)
            // Features split timestamps in UTC on both paths.
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate();
    session = spark;
    long startNanos = System.nanoTime() - starting;
    try {
      String given = a.get("--input").orElse(null);
      String input =
          given != null || !command.readsInput() ? given : defaultInput(spark, paths) + "/lineitem";
      JobSummary summary = new JobSummary(a.job);
      summary.phase(
          "start",
          startNanos,
          "Spark session and executor start, GPU set up; before the wall time below");
      if (output == null) {
        long rows = job.run(spark, input, null, summary);
        System.out.println("overlap: " + a.job + " " + job.done(null));
        System.out.print(
            summary.finish(spark, rows, Math.max(1, spark.sparkContext().defaultParallelism())));
        return 0;
      }
      FileSystem fs = paths.fs(output);
      long rowsOut;
      try (StagedOutput staged = StagedOutput.begin(fs, paths.qualified(output), a.job)) {
        current = staged;
        rowsOut = job.run(spark, input, staged.staging().toString(), summary);
        long committing = System.nanoTime();
        staged.commit();
        summary.phaseSince("commit", committing, "the new output put in place");
      } finally {
        current = null;
      }
      job.committed(summary);
      System.out.println("overlap: " + a.job + " " + job.done(output));
      // Asked after the job: on a cluster, executors register after the session starts.
      int slots = Math.max(1, spark.sparkContext().defaultParallelism());
      // Also into the event log, before the session stops.
      System.out.print(summary.finish(spark, rowsOut, slots));
    } finally {
      spark.stop();
    }
    // Written by this JVM's executor (local mode) when Spark stopped, with spark.overlap.trace.dir.
    TraceFiles.svg().ifPresent(p -> System.out.println("overlap: timeline " + p));
    return 0;
  }

  /**
   * The embedded default data, generated on first use through the same staged replace as any
   * output, so that an interrupted first run leaves nothing that blocks the next.
   */
  private static String defaultInput(SparkSession spark, JobPaths paths) throws IOException {
    String dir = DEFAULT_DATA;
    FileSystem fs = paths.fs(dir);
    Path target = paths.qualified(dir);
    StagedRecovery.recover(fs, target);
    if (fs.exists(target)) {
      boolean complete =
          StagedOutput.writtenBy(fs, target).isPresent()
              || (fs.exists(new Path(target, "lineitem/_SUCCESS"))
                  && fs.exists(new Path(target, "orders/_SUCCESS")));
      if (!complete) {
        throw new UsageException(
            "the default data folder '"
                + dir
                + "' exists but holds no complete TPC-H tables; delete it, or pass --input");
      }
      return target.toString();
    }
    System.out.println(
        "no --input: generating the embedded default (TPC-H SF " + DEFAULT_SCALE + ") in " + dir);
    try (StagedOutput staged = StagedOutput.begin(fs, target, "generate")) {
      current = staged;
      TpchGenerate.run(spark, DEFAULT_SCALE, staged.staging().toString());
      staged.commit();
    } finally {
      current = null;
    }
    return target.toString();
  }

  /**
   * SIGINT or SIGTERM: stop Spark so no task writes on, delete the staging folder unless the result
   * was already in place, and say what the output holds. Runs before Spark's own hook.
   */
  private static void onShutdown() {
    if (finished) {
      return;
    }
    StagedOutput.stopping = true;
    StagedOutput staged = current;
    SparkSession spark = session;
    if (spark != null) {
      try {
        spark.sparkContext().cancelAllJobs();
        spark.stop();
      } catch (RuntimeException e) {
        LOG.warn("stopping Spark on shutdown", e);
      }
    }
    boolean committed = staged != null && staged.abandon();
    String outcome =
        staged == null
            ? "nothing was changed"
            : committed
                ? "the new result was in place in " + staged.target()
                : "nothing was changed (" + staged.target() + " holds what it held before)";
    Optional<String> fatal = FatalExit.line(jobName, master, outcome);
    if (fatal.isPresent()) {
      clearProgressBar();
      System.err.println("overlap: " + fatal.get() + logNamed("details"));
    } else if (committed) {
      System.err.println(
          "overlap: interrupted after the new result was in place in " + staged.target());
    } else {
      System.err.println("overlap: interrupted; " + outcome);
    }
    System.err.flush();
  }

  private static void waitForExit() {
    while (true) {
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        // keep waiting: the JVM is shutting down
      }
    }
  }
}
