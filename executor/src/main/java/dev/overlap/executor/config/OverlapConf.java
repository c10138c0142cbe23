package dev.overlap.executor.config;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The one registry of Overlap's configuration keys. Every key is declared here with its type,
 * default and documentation, but those under {@code spark.overlap.gpu.}, declared in {@link
 * GpuKeys}; {@link #ALL} lists them all, and {@code docs/configs.md} is generated from it.
 *
 * <p>An instance holds the values read from one source (a {@code SparkConf}, the plugin context's
 * conf, a map in a test). Reading validates every key at once, so a bad value fails at executor
 * start with a message that names the key and what it accepts. A key under the prefix that is not
 * registered (a typo, a removed key) fails the application at start too: see {@link UnknownKeys}.
 */
public final class OverlapConf {
  public static final String PREFIX = "spark.overlap.";

  /** Where every key is listed, named in the message for an unknown key. */
  static final String DOCS = "docs/configs.md";

  public static final ConfigEntry<Boolean> ENABLED =
      ConfigEntry.builder(PREFIX + "enabled")
          .doc(
              "Use the GPU pipeline. When false at executor start, the GPU is not set up; when"
                  + " false for a job, its kernels run their CPU implementation, as on an executor"
                  + " without a GPU.")
          .booleanConf(true);

  public static final ConfigEntry<NoGpuMode> NO_GPU_MODE =
      ConfigEntry.builder(PREFIX + "noGpu.mode")
          .doc(
              "What a job does on an executor where no GPU is usable: CPU runs the kernel's CPU"
                  + " implementation, FAIL fails the task with the reason.")
          .enumConf(NoGpuMode.class, NoGpuMode.CPU);

  public static final ConfigEntry<Double> RMM_POOL_FRACTION =
      ConfigEntry.builder(PREFIX + "rmm.poolFraction")
          .doc(
              "Fraction of the GPU's free memory that the RMM pool takes when this plugin"
                  + " initializes RMM. Ignored when RMM is already initialized (for example by the"
                  + " RAPIDS Accelerator listed first in spark.plugins); then its pool is reused.")
          .startupOnly()
          .doubleConf(0.5, 0.0, 1.0);

  public static final ConfigEntry<Long> PINNED_POOL_SIZE =
      ConfigEntry.builder(PREFIX + "pinned.poolSize")
          .doc(
              "Size of cuDF's pinned host memory pool when this plugin initializes it. 0 derives it:"
                  + " the staging buffers plus spark.overlap.prefetch.maxBytes for results coming"
                  + " back. Results that do not fit come back through pageable memory, several"
                  + " times slower; raise it for kernels with wide results, bearing in mind that"
                  + " pinning is paid at executor start (about 17 s for 32g on an H200 host)."
                  + " Ignored when the pool already exists.")
          .startupOnly()
          .bytesConf("0", 0);

  public static final ConfigEntry<Long> STAGING_BUFFER_SIZE =
      ConfigEntry.builder(PREFIX + "staging.bufferSize")
          .doc(
              "Size of one pinned staging buffer. A batch is packed into one buffer, so this is"
                  + " also the largest batch in bytes.")
          .startupOnly()
          .bytesConf("128m", 1L << 16);

  public static final ConfigEntry<Integer> STAGING_BUFFERS =
      ConfigEntry.builder(PREFIX + "staging.buffers")
          .doc(
              "Number of pinned staging buffers per executor. Task threads wait for a free one"
                  + " before packing a batch; at least two let one be packed while another uploads.")
          .startupOnly()
          .intConf(4, 1, 1024);

  public static final ConfigEntry<Long> PREFETCH_MAX_BYTES =
      ConfigEntry.builder(PREFIX + "prefetch.maxBytes")
          .doc(
              "Budget of bytes in flight on the device, across all tasks of the executor: each"
                  + " batch's input from upload until its results are back, and its kernel's"
                  + " output from the end of the kernel until it is downloaded. When it is full,"
                  + " task threads wait. A single batch larger than the budget runs alone.")
          .startupOnly()
          .bytesConf("1g", 1);

  public static final ConfigEntry<Integer> PREFETCH_BATCHES_PER_TASK =
      ConfigEntry.builder(PREFIX + "prefetch.batchesPerTask")
          .doc(
              "How many batches one task may have in the pipeline ahead of the one it is"
                  + " consuming.")
          .intConf(3, 1, 64);

  public static final ConfigEntry<Integer> COMPUTE_THREADS =
      ConfigEntry.builder(PREFIX + "pipeline.computeThreads")
          .doc(
              "Threads that run kernels (and the GPU's Parquet decode), per executor. Each task is"
                  + " served by one of them (the one serving the fewest running tasks when a task"
                  + " starts), so its batches are computed in order; each thread runs its kernels"
                  + " on its own stream, so several let different tasks' kernels run on the GPU at"
                  + " once. Kernels' intermediate columns are not counted in"
                  + " spark.overlap.prefetch.maxBytes: each running kernel needs its own.")
          .startupOnly()
          .intConf(4, 1, 64);

  public static final ConfigEntry<Integer> DOWNLOAD_THREADS =
      ConfigEntry.builder(PREFIX + "pipeline.downloadThreads")
          .doc(
              "Threads that bring kernels' results back, per executor. Each task is served by one"
                  + " of them (the one serving the fewest running tasks when a task starts), so its"
                  + " results come back in order; several let different tasks' results come back"
                  + " at once. Results copied back as they are share the download stream; results"
                  + " written as Parquet (GpuPartitions.write) are encoded on the device by their"
                  + " thread, each encode needing device memory of about its batch's output while"
                  + " it runs. 1 by default: on an H200, 4 threads made features' Parquet write no"
                  + " faster (docs/benchmarks.md, thirteenth set).")
          .startupOnly()
          .intConf(1, 1, 64);

  public static final ConfigEntry<Integer> BATCH_MAX_ROWS =
      ConfigEntry.builder(PREFIX + "batch.maxRows")
          .doc(
              "Most rows packed into one batch; a batch also ends when its staging buffer is"
                  + " full.")
          .intConf(4 << 20, 1, Integer.MAX_VALUE - 1);

  public static final ConfigEntry<Integer> STRING_BYTES_PER_ROW =
      ConfigEntry.builder(PREFIX + "batch.stringBytesPerRow")
          .doc(
              "Bytes per row reserved for each string column when a batch of rows is laid out;"
                  + " a batch ends early when a string column outgrows its share.")
          .intConf(32, 1, 1 << 20);

  public static final ConfigEntry<Boolean> RESULTS_PINNED =
      ConfigEntry.builder(PREFIX + "results.pinned")
          .doc(
              "Copy kernel results back into the pinned pool, falling back to pageable memory when"
                  + " it is full: cuDF's pool logs an error line when it refuses an allocation, and"
                  + " the rest of that batch's results then go to pageable memory. Pinned memory"
                  + " makes the copy back many times faster; false copies results into pageable"
                  + " memory and keeps the pool for staging alone.")
          .booleanConf(true);

  public static final ConfigEntry<ParquetDecodeMode> PARQUET_DECODE =
      ConfigEntry.builder(PREFIX + "parquet.decode")
          .doc(
              "Where Parquet input under a kernel is decoded, when the kernel's input is a plain"
                  + " Parquet scan (column pruning and renaming allowed, nothing computed on the way):"
                  + " AUTO copies the projected columns' compressed chunks to the GPU and decodes"
                  + " them there, falling back to the host for a task with a file the GPU cannot"
                  + " read exactly as Spark would (encrypted, a codec cuDF lacks, the legacy"
                  + " calendar, INT96, a legacy list layout or mismatched types) or whose pages cuDF"
                  + " failed to decode, with the reason in the job summary; HOST always decodes on"
                  + " the host; GPU fails such a task instead.")
          .enumConf(ParquetDecodeMode.class, ParquetDecodeMode.AUTO);

  public static final ConfigEntry<RapidsInputMode> RAPIDS_INPUT =
      ConfigEntry.builder(PREFIX + "rapids.input")
          .doc(
              "Beside the RAPIDS Accelerator (com.nvidia.spark.SQLPlugin in spark.plugins,"
                  + " spark.rapids.sql.enabled): AUTO gives a kernel the device batches of a plan"
                  + " RAPIDS placed on the GPU (its ColumnarRdd), with no packing and no copy,"
                  + " columns cast to the kernel's declared types (not under adaptive execution,"
                  + " where ColumnarRdd converts rows on the host), except for a plain Parquet"
                  + " scan, which Overlap decodes on the GPU itself (spark.overlap.parquet.decode);"
                  + " ALWAYS takes RAPIDS' batches for plain scans too; OFF never takes them. Where"
                  + " they are not taken, a plain Parquet scan is still Overlap's, and any other"
                  + " plan's rows are packed. The job summary's input line says which path ran, or"
                  + " why the RAPIDS batches were not taken.")
          .enumConf(RapidsInputMode.class, RapidsInputMode.AUTO);

  public static final ConfigEntry<Boolean> PLANNER_WARM_UP =
      ConfigEntry.builder(PREFIX + "driver.plannerWarmUp")
          .doc(
              "Plan one small aggregation on a background thread of the driver as soon as the"
                  + " application's Spark session exists (nothing runs: the plan is made and"
                  + " dropped), so that the one-time cost of a JVM's first query plan (loading"
                  + " Spark's planner, and beside the RAPIDS Accelerator its rules, several hundred"
                  + " ms) is paid while the job reads its input, not in its first queries' plans."
                  + " It takes a driver core for a few seconds: on a driver with two cores or"
                  + " fewer it may gain nothing.")
          .readAtDriverStart()
          .booleanConf(true);

  public static final ConfigEntry<Long> PARQUET_BATCH_BYTES =
      ConfigEntry.builder(PREFIX + "parquet.batchBytes")
          .doc(
              "Compressed bytes of column chunks gathered into one batch when the GPU decodes"
                  + " Parquet: row groups (of one or several files) are added while they fit."
                  + " 0 means the staging buffer size, which is also the most it can be. A row group"
                  + " larger than that is read into a buffer of its own.")
          .bytesConf("0", 0);

  public static final ConfigEntry<String> TRACE_DIR =
      ConfigEntry.builder(PREFIX + "trace.dir")
          .doc(
              "Folder into which each executor writes a timeline of its pipeline when it shuts"
                  + " down: overlap-trace-EXECUTORID-PID.json (Chrome trace events, opens in"
                  + " ui.perfetto.dev) and overlap-trace-EXECUTORID-PID.svg, one row per task"
                  + " thread and per pipeline thread. Empty (the default) records nothing. The CPU"
                  + " path records one span per partition on its task's thread. At most 1,000,000"
                  + " spans are kept.")
          .startupOnly()
          .stringConf("");

  public static final ConfigEntry<Boolean> DEBUG_TRACK_BATCHES =
      ConfigEntry.builder(PREFIX + "debug.trackBatches")
          .doc(
              "Debugging: record where each batch of the GPU path (packed, uploaded) is made and"
                  + " retained, and log at the end of every task one line for each of its batches"
                  + " still held, with those stack traces, and their count. A batch never closed"
                  + " otherwise shows only as an executor waiting for a staging buffer or the"
                  + " device budget. Costs a stack trace per batch and reference.")
          .startupOnly()
          .booleanConf(false);

  /** Every key, in the order the docs list them. */
  public static final List<ConfigEntry<?>> ALL =
      List.of(
          ENABLED,
          NO_GPU_MODE,
          GpuKeys.ON_FATAL_ERROR,
          GpuKeys.STALL_TIMEOUT,
          GpuKeys.BACKGROUND_START,
          RMM_POOL_FRACTION,
          PINNED_POOL_SIZE,
          STAGING_BUFFER_SIZE,
          STAGING_BUFFERS,
          PREFETCH_MAX_BYTES,
          PREFETCH_BATCHES_PER_TASK,
          COMPUTE_THREADS,
          DOWNLOAD_THREADS,
          BATCH_MAX_ROWS,
          STRING_BYTES_PER_ROW,
          RESULTS_PINNED,
          PARQUET_DECODE,
          PARQUET_BATCH_BYTES,
          RAPIDS_INPUT,
          PLANNER_WARM_UP,
          TRACE_DIR,
          DEBUG_TRACK_BATCHES,
          SqlKeys.ENABLED,
          SqlKeys.EXPLAIN,
          SqlKeys.WITHOUT_GPU);

  private final Map<ConfigEntry<?>, Object> values;

  private OverlapConf(Map<ConfigEntry<?>, Object> values) {
    this.values = values;
  }

  /**
   * Reads and validates every key. {@code lookup} returns a key's raw value or null when unset.
   *
   * @throws OverlapConfigException for the first key with an invalid value
   */
  public static OverlapConf read(Function<String, String> lookup) {
    Map<ConfigEntry<?>, Object> values = new java.util.LinkedHashMap<>();
    for (ConfigEntry<?> e : ALL) {
      values.put(e, e.read(lookup));
    }
    return new OverlapConf(values);
  }

  public static OverlapConf fromMap(Map<String, String> map) {
    return read(map::get);
  }

  public static OverlapConf defaults() {
    return read(k -> null);
  }

  @SuppressWarnings("unchecked")
  public <T> T get(ConfigEntry<T> entry) {
    if (!values.containsKey(entry)) {
      throw new IllegalArgumentException(entry.key() + " is not registered in OverlapConf.ALL");
    }
    return (T) values.get(entry);
  }
}
