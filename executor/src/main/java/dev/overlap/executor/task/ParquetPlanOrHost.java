package dev.overlap.executor.task;

import ai.rapids.cudf.CudfException;
import ai.rapids.cudf.HybridScanReader;
import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.ParquetDecodeMode;
import dev.overlap.executor.gpu.FaultedFiles;
import dev.overlap.executor.input.parquet.DecodeFailed;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.NotForGpu;
import dev.overlap.executor.input.parquet.ParquetSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.TaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a Parquet partition is decoded on the GPU: its files' plans, or null when the host
 * decodes it (Spark's batches are then packed instead), because the job asks for the host or a file
 * needs it. A file needs it when the GPU would not read it exactly as Spark does ({@link
 * FilePlan#of}), and when cuDF's reader cannot parse its footer although Spark's can (a writer's
 * field of an unexpected type, say), and when cuDF could not decode its pages before ({@link
 * #decodeFailed}), and when a GPU failed fatally decoding it before ({@link FaultedFiles}; a
 * retried task, and a stage's first on each executor, asks the driver first, its scan's plan
 * perhaps older than the fault). The reason for the host is logged once per executor and kept in
 * the report (a fault among the report's and the stage's faults instead); {@code
 * spark.overlap.parquet.decode=GPU} fails the task instead.
 */
public final class ParquetPlanOrHost {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionRunner.class);
  // Each fallback reason is logged once per executor.
  private static final Set<String> FALLBACKS_LOGGED = ConcurrentHashMap.newKeySet();
  // Files whose pages cuDF could not decode on this executor, with the reason: read on the host
  // from then on.
  private static final Map<String, String> UNDECODABLE = new ConcurrentHashMap<>();

  private ParquetPlanOrHost() {}

  /** Checks that cuDF can read what a plan reads; throws when it cannot. */
  @FunctionalInterface
  interface Check {
    void check(FilePlan plan) throws NotForGpu;
  }

  /**
   * Which run of its partition a task is, in which stage: a retry ({@code attemptNumber() > 0}) or
   * a task of a stage's retry ({@code stageAttemptNumber() > 0}) may follow a fault that its scan's
   * plan predates; so may any task of a stage that runs after the one that met it (a job plans its
   * queries before it runs them).
   *
   * @param stageId the stage; -1 outside a Spark task
   */
  record Attempt(int stageId, int stageAttempt, int task) {
    static final Attempt FIRST = new Attempt(-1, 0, 0);

    static Attempt of(TaskContext ctx) {
      return ctx == null
          ? FIRST
          : new Attempt(ctx.stageId(), ctx.stageAttemptNumber(), ctx.attemptNumber());
    }

    boolean retry() {
      return task > 0 || stageAttempt > 0;
    }
  }

  // The stage attempts whose first Parquet task on this executor asked the driver for its record.
  private static final Set<Attempt> ASKED = ConcurrentHashMap.newKeySet();

  /**
   * Whether the task asks the driver which files faulted a GPU: a retry always; otherwise the first
   * task of a stage on this executor, so that one ask per stage and executor covers a fault met in
   * an earlier stage on another executor, which may have exited since.
   */
  private static boolean asks(Attempt a) {
    if (a.retry()) {
      return true;
    }
    if (a.stageId() < 0) {
      return false;
    }
    if (ASKED.size() > 4096) {
      ASKED.clear();
    }
    return ASKED.add(new Attempt(a.stageId(), a.stageAttempt(), 0));
  }

  /**
   * The files' plans for the GPU's decode, or null for the host's.
   *
   * @param figures told of a file read on the host because it faulted a GPU; may be null
   */
  static List<FilePlan> plans(
      TaskInput.Parquet in, OverlapConf job, JobReport report, TaskFigures figures) {
    return plans(
        in,
        job,
        report,
        figures,
        Attempt.of(TaskContext.get()),
        ParquetPlanOrHost::cudfReadsFooter);
  }

  /** As above, for a first attempt, each plan checked with {@code check} (a test's cuDF). */
  static List<FilePlan> plans(
      TaskInput.Parquet in, OverlapConf job, JobReport report, Check check) {
    return plans(in, job, report, report, Attempt.FIRST, check);
  }

  /** As above, for the task {@code attempt}. */
  static List<FilePlan> plans(
      TaskInput.Parquet in,
      OverlapConf job,
      JobReport report,
      TaskFigures figures,
      Attempt attempt,
      Check check) {
    ParquetDecodeMode mode0 = job.get(OverlapConf.PARQUET_DECODE);
    if (mode0 == ParquetDecodeMode.HOST) {
      return null;
    }
    if (asks(attempt)) {
      // The scan may have been planned before a file faulted a GPU on another executor, which
      // may have exited since: the driver has heard of it.
      FaultedFiles.askDriver();
    }
    String faulted = in.input().faulted(in.partition());
    if (faulted != null) {
      // Named as a fault, not again as a fallback.
      if (figures != null) {
        figures.addFault(faulted);
      }
      return host(faulted, mode0, null);
    }
    try {
      if (attempt.task() > 0) {
        // An earlier attempt may have failed decoding a file on another executor, after handing
        // on results: a retry never meets it on the GPU again.
        throw new NotForGpu(
            "a retry of task " + in.partition() + " reads its Parquet files on the host");
      }
      List<FilePlan> plans = in.input().plan(in.partition());
      for (FilePlan p : plans) {
        String failed = UNDECODABLE.get(p.split().path());
        if (failed != null) {
          throw new NotForGpu(failed);
        }
        check.check(p);
      }
      return plans;
    } catch (NotForGpu e) {
      return host(e.reason(), mode0, report);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The host's decode for {@code reason}, logged once per executor and kept in {@code report} (may
   * be null); under {@code spark.overlap.parquet.decode=GPU} a failed task instead.
   */
  private static List<FilePlan> host(String reason, ParquetDecodeMode mode, JobReport report) {
    if (mode == ParquetDecodeMode.GPU) {
      throw new IllegalStateException(
          reason
              + ". "
              + OverlapConf.PARQUET_DECODE.key()
              + "=GPU forbids decoding it on the host; set it to AUTO to let it.");
    }
    if (FALLBACKS_LOGGED.add(reason)) {
      LOG.info("Parquet decoded on the host: {}", reason);
    }
    if (report != null) {
      report.addFallback(reason);
    }
    return null;
  }

  /**
   * A file whose pages cuDF could not decode: remembered, so that every later plan of it on this
   * executor reads it on the host; logged once and kept in the report as any fallback.
   */
  static void decodeFailed(DecodeFailed d, JobReport report) {
    String reason = d.getMessage();
    UNDECODABLE.putIfAbsent(d.file(), reason);
    if (FALLBACKS_LOGGED.add(reason)) {
      LOG.info("Parquet decoded on the host: {}", reason, d);
    }
    if (report != null) {
      report.addFallback(reason);
    }
  }

  /**
   * Whether cuDF's Parquet reader parses {@code plan}'s footer, which Spark's reader has parsed: a
   * reader made and closed, once per cached footer and columns read ({@link
   * dev.overlap.executor.input.parquet.ParquetFooter#cudfVerdict}). A fatal CUDA error is not the
   * file's fault and is thrown as it is.
   *
   * @throws NotForGpu when cuDF refuses the footer, naming the file and cuDF's reason
   */
  static void cudfReadsFooter(FilePlan plan) throws NotForGpu {
    String[] columns = plan.columns().include();
    String refused =
        plan.footer()
            .cudfVerdict(
                columns,
                () -> {
                  try {
                    byte[] footer;
                    try {
                      footer = ParquetSource.footerFor(plan);
                    } catch (RuntimeException e) {
                      // The footer cut down to the columns read could not be made.
                      return footerRefused(plan.split().fileName(), e);
                    }
                    cudfReadsFooter(
                        plan.split().fileName(), footer, ParquetSource.columnsFor(plan));
                    return "";
                  } catch (NotForGpu e) {
                    return e.reason();
                  }
                });
    if (!refused.isEmpty()) {
      throw new NotForGpu(refused);
    }
  }

  /** As above, for a footer's bytes and the columns read. */
  static void cudfReadsFooter(String file, byte[] footer, String[] columns) throws NotForGpu {
    try (HybridScanReader r = ParquetSource.reader(footer, columns)) {
      // Made, so the footer parsed.
    } catch (CudfException e) {
      throw new NotForGpu(footerRefused(file, e));
    }
  }

  /** The reason for a footer cuDF refused: the file and the first line of cuDF's message. */
  static String footerRefused(String file, Throwable cudf) {
    String m = String.valueOf(cudf.getMessage()).lines().findFirst().orElse("").trim();
    return file
        + ": cuDF's Parquet reader cannot parse its footer, which Spark's reads ("
        + m
        + ")";
  }
}
