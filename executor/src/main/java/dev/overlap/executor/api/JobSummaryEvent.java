package dev.overlap.executor.api;

import java.util.List;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.sql.SparkSession;

/**
 * A job's summary as a Spark listener event: posted to the listener bus when the job ends, so that
 * the event log keeps it (Spark writes an event of its own class as one JSON line, the class's name
 * in {@code "Event"}) and the History Server replays it to its listeners when this jar is on its
 * class path. Times are whole milliseconds, rounded down from the reports' nanoseconds, as the
 * stage page's accumulators show them.
 *
 * @param job the job's name ({@code etl}, {@code features}, ...)
 * @param wallMillis the job's wall time, as the summary gives it
 * @param path which path its kernels ran: {@code GPU}, {@code mixed GPU and CPU}, or the CPU path
 *     and why
 * @param rowsIn rows the job read; -1 when not known
 * @param rowsOut rows the job wrote
 * @param steps each kernel step's figures, in the summary's order
 * @param text the summary as printed on the driver's terminal
 */
@Public
public record JobSummaryEvent(
    String job,
    long wallMillis,
    String path,
    long rowsIn,
    long rowsOut,
    List<Step> steps,
    String text)
    implements SparkListenerEvent {

  public JobSummaryEvent {
    steps = List.copyOf(steps);
  }

  /**
   * One step's figures: those of its {@link PipelineReport}, under the names of the stage page's
   * accumulators (docs/operations.md says what each means).
   */
  public record Step(
      String name,
      long gpuTasks,
      long cpuTasks,
      long rowsIn,
      long rowsOut,
      long batches,
      long copyInBytes,
      long parquetCompressedBytes,
      long packMs,
      long copyInMs,
      long computeMs,
      long decodeMs,
      long copyBackMs,
      long stagingWaitMs,
      long resultWaitMs,
      long rapidsMs,
      long cpuKernelMs) {

    /** The figures {@code r} holds now: read it after the step's actions have run. */
    public static Step of(String name, PipelineReport r) {
      return new Step(
          name,
          r.gpuTasks(),
          r.cpuTasks(),
          r.rowsIn(),
          r.rowsOut(),
          r.batches(),
          r.bytesCopied(),
          r.parquetCompressedBytes(),
          ms(r.busyNanos(PipelineStage.PACK)),
          ms(r.busyNanos(PipelineStage.UPLOAD)),
          ms(r.busyNanos(PipelineStage.COMPUTE)),
          ms(r.decodeNanos()),
          ms(r.busyNanos(PipelineStage.DOWNLOAD)),
          ms(r.stagingWaitNanos()),
          ms(r.resultWaitNanos()),
          ms(r.rapidsBatchNanos()),
          ms(r.cpuKernelNanos()));
    }

    private static long ms(long nanos) {
      return nanos / 1_000_000;
    }
  }

  /**
   * Posts the event to {@code spark}'s listener bus, which hands it to the event log (when {@code
   * spark.eventLog.enabled}) and to every listener; returns at once.
   */
  public void post(SparkSession spark) {
    // Spark has no public way to post an event; its own modules and other plugins use this one.
    spark.sparkContext().listenerBus().post(this);
  }
}
