package dev.overlap.executor.output.parquet;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.api.Written;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * One write of a kernel's output as Parquet through Spark's commit protocol (the class named by
 * {@code spark.sql.sources.commitProtocolClass}, as Spark's own file writer uses): set up on the
 * driver, shipped to the tasks, which open their attempts with {@link #openTask}, and committed
 * ({@link #commit}) or aborted ({@link #abort}) on the driver. The output folder must not exist or
 * be empty; it holds files only after the job's commit.
 */
public final class ParquetWrite implements Serializable {
  private static final long serialVersionUID = 1L;

  static final String DEFAULT_PROTOCOL =
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol";

  private final FileCommitProtocol committer;
  private final SerializableConfiguration jobConf;
  private final String jobTracker;
  private final ParquetOutput output;
  private final OutputWriterFactory cpuWriter;
  private final StructType schema;
  private final String path;
  private transient Job job;

  private ParquetWrite(
      FileCommitProtocol committer,
      Job job,
      String jobTracker,
      ParquetOutput output,
      OutputWriterFactory cpuWriter,
      StructType schema,
      String path) {
    this.committer = committer;
    this.job = job;
    this.jobConf = new SerializableConfiguration(job.getConfiguration());
    this.jobTracker = jobTracker;
    this.output = output;
    this.cpuWriter = cpuWriter;
    this.schema = schema;
    this.path = path;
  }

  /**
   * Sets the job up on the driver.
   *
   * @throws IllegalArgumentException when the output exists and is not an empty folder
   */
  public static ParquetWrite begin(SparkSession spark, ParquetOutput output, StructType schema) {
    Configuration hadoop = spark.sessionState().newHadoopConf();
    try {
      Path p = new Path(output.path());
      FileSystem fs = p.getFileSystem(hadoop);
      Path qualified = fs.makeQualified(p);
      refuseExisting(fs, qualified);
      Job job = Job.getInstance(hadoop);
      job.setOutputKeyClass(Void.class);
      job.setOutputValueClass(InternalRow.class);
      FileOutputFormat.setOutputPath(job, qualified);
      job.getConfiguration().setLong("parquet.block.size", output.rowGroupBytes());
      // Spark's own Parquet writer, for tasks on executors without a GPU.
      OutputWriterFactory cpu =
          new ParquetFileFormat()
              .prepareWrite(
                  spark,
                  job,
                  new scala.collection.immutable.Map.Map1<>("compression", output.compression()),
                  schema);
      String protocol = spark.conf().get("spark.sql.sources.commitProtocolClass", DEFAULT_PROTOCOL);
      FileCommitProtocol committer =
          FileCommitProtocol.instantiate(
              protocol, UUID.randomUUID().toString(), qualified.toString(), false);
      committer.setupJob(job);
      String tracker = new SimpleDateFormat("yyyyMMddHHmmss", Locale.US).format(new Date());
      return new ParquetWrite(committer, job, tracker, output, cpu, schema, qualified.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("output '" + output.path() + "': " + e.getMessage(), e);
    }
  }

  private static void refuseExisting(FileSystem fs, Path p) throws IOException {
    FileStatus st;
    try {
      st = fs.getFileStatus(p);
    } catch (java.io.FileNotFoundException e) {
      return;
    }
    if (!st.isDirectory()) {
      throw new IllegalArgumentException(
          "output '" + p + "' is a file; write the Parquet output to a new folder");
    }
    if (fs.listStatus(p).length > 0) {
      throw new IllegalArgumentException(
          "output '"
              + p
              + "' exists and is not empty; write the Parquet output to a new folder (nothing"
              + " there is changed)");
    }
  }

  public ParquetOutput output() {
    return output;
  }

  OutputWriterFactory cpuWriter() {
    return cpuWriter;
  }

  String path() {
    return path;
  }

  /**
   * In a task that wrote no file: writes one Parquet file of no rows with the output's schema, as
   * Spark's own writer does in a write's first task, so that an output with no rows still reads
   * back with its columns (a folder with only {@code _SUCCESS} has no schema to read).
   */
  public void schemaOnlyFile(TaskFiles files) throws IOException {
    String file = files.newFile(cpuWriter.getFileExtension(files.context()));
    cpuWriter.newInstance(file, schema, files.context()).close();
    files.addFileBytes(file);
  }

  /** On an executor: the running task's attempt, set up in the protocol. */
  public TaskFiles openTask() {
    return TaskFiles.open(committer, jobConf.value(), jobTracker);
  }

  /**
   * As {@link #openTask}, for attempt {@code attempt} of task {@code partition} of {@code stage}.
   */
  TaskFiles openTask(int stage, int partition, int attempt) {
    return TaskFiles.open(committer, jobConf.value(), jobTracker, stage, partition, attempt);
  }

  /** On the driver, once every task committed: publishes the files (and {@code _SUCCESS}). */
  public Written commit(List<TaskFiles.Outcome> outcomes) {
    List<FileCommitProtocol.TaskCommitMessage> messages = new ArrayList<>();
    long rows = 0;
    long files = 0;
    long bytes = 0;
    long gpu = 0;
    for (TaskFiles.Outcome o : outcomes) {
      committer.onTaskCommit(o.message());
      messages.add(o.message());
      rows += o.rows();
      files += o.files();
      bytes += o.bytes();
      gpu += o.gpu() ? 1 : 0;
    }
    committer.commitJob(job, scala.jdk.javaapi.CollectionConverters.asScala(messages).toList());
    return new Written(rows, files, bytes, gpu);
  }

  /** On the driver, after a failure: removes what the job wrote; a failure to is added to it. */
  public void abort(Throwable cause) {
    try {
      committer.abortJob(job);
    } catch (RuntimeException | Error e) {
      cause.addSuppressed(e);
    }
  }
}
