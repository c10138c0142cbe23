package dev.overlap.jobs.cli;

import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.api.InputPath;
import dev.overlap.executor.api.JobSummaryEvent;
import dev.overlap.executor.api.PipelineReport;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.api.PipelineTotals;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/** The one-screen summary every job prints at the end. */
public final class JobSummary {
  private final String job;
  private final long start = System.nanoTime();
  private final Map<String, PipelineReport> reports = new LinkedHashMap<>();
  private final Map<String, String> phases = new LinkedHashMap<>();
  private long rowsIn = -1;
  // The executor in this JVM (local mode); its pipeline's counters bracket the job.
  private final PipelineTotals before = PipelineTotals.current().orElse(null);

  public JobSummary(String job) {
    this.job = job;
  }

  public void add(String step, PipelineReport r) {
    reports.put(step, r);
  }

  /**
   * The rows the job read from its input, for a job whose steps read different inputs. Without it,
   * "rows in" is the most rows any one step read: steps that read the same input (etl's Q1 and Q6
   * both read lineitem) count it once.
   */
  public void rowsIn(long rows) {
    rowsIn = rows;
  }

  /** A part of the wall time worth its own line, such as a pass that runs on Spark alone. */
  public void phase(String name, long nanos, String what) {
    phases.put(name, String.format(Locale.ROOT, "%.2f s (%s)", nanos / 1e9, what));
  }

  /** Records the phase that began at {@code since} ({@link System#nanoTime}); returns now. */
  public long phaseSince(String name, long since, String what) {
    long now = System.nanoTime();
    phase(name, now - since, what);
    return now;
  }

  /** A figure worth its own line that is not a time, such as a count of values set aside. */
  public void note(String name, String text) {
    phases.put(name, text);
  }

  /** How the step's GPU tasks got their input; for Parquet, what was decoded or why not. */
  static String inputLine(String step, PipelineReport r) {
    StringBuilder sb = new StringBuilder();
    List<String> paths = new ArrayList<>();
    for (InputPath p : InputPath.values()) {
      long n = r.gpuTasks(p);
      if (n > 0) {
        String what = p.label() + " (" + n + (n == 1 ? " task" : " tasks");
        if (p == InputPath.PARQUET) {
          what +=
              String.format(
                  Locale.ROOT,
                  ": %,d files, %,d row groups, %.2f GB compressed, decode %.2f s",
                  r.parquetFiles(),
                  r.parquetRowGroups(),
                  r.parquetCompressedBytes() / 1e9,
                  r.decodeNanos() / 1e9);
        } else if (p == InputPath.RAPIDS) {
          what +=
              String.format(
                  Locale.ROOT,
                  ": %.2f s waiting for them, summed over the task threads: RAPIDS' operators,"
                      + " its GPU admission, the cast to the kernel's types",
                  r.rapidsBatchNanos() / 1e9);
        }
        paths.add(what + ")");
      }
    }
    sb.append(String.format(Locale.ROOT, "%-14s input: %s%n", "", String.join("; ", paths)));
    r.rapidsNotTaken()
        .ifPresent(
            why ->
                sb.append(
                    String.format(
                        Locale.ROOT, "%-14s RAPIDS device batches not taken: %s%n", "", why)));
    List<String> why = r.parquetFallbacks();
    for (int i = 0; i < Math.min(3, why.size()); i++) {
      sb.append(String.format(Locale.ROOT, "%-14s decoded on the host: %s%n", "", why.get(i)));
    }
    if (why.size() > 3) {
      sb.append(
          String.format(Locale.ROOT, "%-14s (%d more reasons in the log)%n", "", why.size() - 3));
    }
    return sb.toString();
  }

  /**
   * A step's GPU faults, each file once over the job ({@code named} holds those already named), and
   * its tasks that went on on the CPU after one.
   */
  static String faultLines(String step, PipelineReport r, java.util.Set<String> named) {
    StringBuilder sb = new StringBuilder();
    for (String f : r.gpuFaults()) {
      if (named.add(f)) {
        sb.append(String.format(Locale.ROOT, "%-14s GPU fault: %s%n", step, f));
      }
    }
    long fellBack = r.fellBackTasks();
    if (fellBack > 0) {
      sb.append(
          String.format(
              Locale.ROOT,
              "%-14s %d of its CPU %s began on the GPU and went on on the CPU after a fatal GPU"
                  + " error%n",
              step,
              fellBack,
              r.cpuTasks() == 1 ? "task" : "tasks"));
    }
    return sb.toString();
  }

  /**
   * The summary as printed, also posted to the session's listener bus as a {@link JobSummaryEvent}
   * with the same figures, so that the event log keeps them.
   */
  public String finish(SparkSession spark, long rowsOut, int slots) {
    long wall = System.nanoTime() - start;
    String text = render(rowsOut, slots, wall);
    List<JobSummaryEvent.Step> steps = new ArrayList<>();
    reports.forEach((step, r) -> steps.add(JobSummaryEvent.Step.of(step, r)));
    new JobSummaryEvent(
            job, wall / 1_000_000, reports.isEmpty() ? "" : path(), rowsIn(), rowsOut, steps, text)
        .post(spark);
    return text;
  }

  /** The rows the job read: as stated, or the most any one step read; -1 when not known. */
  private long rowsIn() {
    long in = rowsIn;
    if (rowsIn < 0) {
      for (PipelineReport r : reports.values()) {
        in = Math.max(in, r.rowsIn());
      }
    }
    return in;
  }

  /** Which path the steps' kernels ran, and why the CPU one when only it ran. */
  private String path() {
    long gpuTasks = 0;
    long cpuTasks = 0;
    for (PipelineReport r : reports.values()) {
      gpuTasks += r.gpuTasks();
      cpuTasks += r.cpuTasks();
    }
    // A step applied in a session without the plugin: what to set to load it.
    java.util.Optional<String> noPlugin =
        reports.values().stream().flatMap(r -> r.pluginNotLoaded().stream()).findFirst();
    // A step whose columns the GPU does not take yet ran its kernel's CPU implementation.
    java.util.Optional<String> notTaken =
        reports.values().stream().flatMap(r -> r.gpuNotTaken().stream()).findFirst();
    return gpuTasks > 0 && cpuTasks == 0
        ? "GPU"
        : gpuTasks > 0
            ? "mixed GPU and CPU"
            : noPlugin
                .map(set -> "CPU path: plugin not loaded (set " + set + ")")
                .or(() -> notTaken.map(why -> "CPU (" + why + ")"))
                .orElse("CPU (" + GpuStatus.current().reason() + ")");
  }

  public String render(long rowsOut, int slots) {
    return render(rowsOut, slots, System.nanoTime() - start);
  }

  private String render(long rowsOut, int slots, long wall) {
    StringBuilder sb = new StringBuilder();
    long in = rowsIn();
    long gpuTasks = 0;
    for (PipelineReport r : reports.values()) {
      gpuTasks += r.gpuTasks();
    }
    String path = reports.isEmpty() ? "" : path();
    sb.append("==== overlap ").append(job).append(" ====\n");
    if (in >= 0) {
      sb.append(String.format(Locale.ROOT, "rows in        %,d%n", in));
    }
    sb.append(String.format(Locale.ROOT, "rows out       %,d%n", rowsOut));
    sb.append(String.format(Locale.ROOT, "wall           %.2f s%n", wall / 1e9));
    phases.forEach((name, text) -> sb.append(String.format(Locale.ROOT, "%-14s %s%n", name, text)));
    if (!reports.isEmpty()) {
      sb.append("path           ").append(path).append('\n');
    }
    // A fault that several steps met is named by the first.
    java.util.Set<String> faultsNamed = new java.util.HashSet<>();
    for (Map.Entry<String, PipelineReport> e : reports.entrySet()) {
      PipelineReport r = e.getValue();
      if (r.gpuTasks() > 0) {
        sb.append(
            String.format(
                Locale.ROOT,
                "%-14s %d batches, %.2f GB copied; busy: pack %.2f s (summed over %d task threads),"
                    + " copy %.2f s, compute %.2f s (summed over the compute threads), copy back"
                    + " %.2f s (summed over the download threads)%n",
                e.getKey(),
                r.batches(),
                r.bytesCopied() / 1e9,
                r.busyNanos(PipelineStage.PACK) / 1e9,
                slots,
                r.busyNanos(PipelineStage.UPLOAD) / 1e9,
                r.busyNanos(PipelineStage.COMPUTE) / 1e9,
                r.busyNanos(PipelineStage.DOWNLOAD) / 1e9));
        sb.append(inputLine(e.getKey(), r));
      }
      if (r.cpuTasks() > 0) {
        // Rows are counted per step, not per path: beside GPU tasks, they are both paths' rows.
        sb.append(
            String.format(
                Locale.ROOT,
                "%-14s %d tasks on the CPU, %,d rows in, %,d out%s; busy: CPU kernel %.2f s"
                    + " (summed over %d task threads, reading its input included)%n",
                e.getKey(),
                r.cpuTasks(),
                r.rowsIn(),
                r.rowsOut(),
                r.gpuTasks() > 0 ? " (GPU and CPU tasks together)" : "",
                r.cpuKernelNanos() / 1e9,
                slots));
      }
      sb.append(faultLines(e.getKey(), r, faultsNamed));
    }
    if (gpuTasks > 0) {
      PipelineTotals d =
          before == null ? null : PipelineTotals.current().map(t -> t.minus(before)).orElse(null);
      if (d == null) {
        sb.append(
            "overlap        see the executors' plugin metrics (busy.*.ms, docs/operations.md)\n");
      } else {
        long gpuBusy =
            d.busy(PipelineStage.UPLOAD)
                + d.busy(PipelineStage.COMPUTE)
                + d.busy(PipelineStage.DOWNLOAD);
        sb.append(
            String.format(
                Locale.ROOT,
                "overlap        %.2f s with two or more of copy, compute and copy back running at"
                    + " once (%.0f %% of their %.2f s busy)%n",
                d.overlapNanos() / 1e9,
                gpuBusy == 0 ? 0.0 : 100.0 * d.overlapNanos() / gpuBusy,
                gpuBusy / 1e9));
      }
    }
    return sb.toString();
  }
}
