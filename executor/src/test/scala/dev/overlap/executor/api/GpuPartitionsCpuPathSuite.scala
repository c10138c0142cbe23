package dev.overlap.executor.api

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import dev.overlap.executor.config.OverlapConfigException
import dev.overlap.executor.plan.ColumnarPlans
import dev.overlap.executor.task.JobReport
import dev.overlap.executor.testing.{AllTypesKernel, NoCpuKernel, TestData}
import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property
import org.apache.spark.SparkException
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.{DayTimeIntervalType, IntegerType, StructType}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * GpuPartitions.map in a real local Spark session with the plugin enabled, on a machine without a
 * GPU: the executor starts, says so, and kernels run their CPU implementation with the same
 * results as Spark SQL.
 */
class GpuPartitionsCpuPathSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var spark: SparkSession = _

  override def beforeAll(): Unit = {
    assume(!GpuTestSupport.gpuVisible, "this suite checks the no-GPU path")
    spark = SparkSession
      .builder()
      .master("local[4]")
      .appName("cpu-path")
      .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .getOrCreate()
  }

  override def afterAll(): Unit = if (spark != null) spark.stop()

  test("the executor starts without a GPU and reports why") {
    val status = GpuStatus.current()
    assert(status.state == GpuStatus.State.NO_GPU)
    assert(status.reason.contains("no CUDA device"), status.reason)
  }

  test("rows fall back to the kernel's CPU implementation with Spark SQL's results") {
    val df = TestData.frame(spark, 3000, 4)
    val report = PipelineReport.create(spark)
    val out = GpuPartitions.map(df, new AllTypesKernel, report)
    assert(out.schema == new AllTypesKernel().outputSchema(TestData.SCHEMA))
    val expected = df.selectExpr(AllTypesKernel.SQL.toIndexedSeq: _*)
    assert(TestData.sorted(out.collectAsList()) == TestData.sorted(expected.collectAsList()))
    assert(report.cpuTasks == 4 && report.gpuTasks == 0)
    assert(report.rowsIn == 3000 && report.rowsOut == 3000)
    // The plugin is loaded (the executor found no GPU): the summary gives the CPU tasks' figures.
    assert(report.pluginNotLoaded.isEmpty)
    val summary = report.stageSummary((2 * 1e9).toLong, 4)
    assert(summary.contains("CPU: 4 tasks ran the kernel's CPU implementation"), summary)
    assert(summary.contains("rows            3,000 in, 3,000 out"), summary)
    assert(!summary.contains("plugin not loaded"), summary)
    assert(!summary.contains("bottleneck"), summary)
    val cpuBusy = "(?m)^  CPU kernel +(\\d+\\.\\d{3}) s busy \\(4 tasks, (\\d+\\.\\d{3}) s summed".r
    val m = cpuBusy.findFirstMatchIn(summary).getOrElse(fail(summary))
    val summed = report.cpuKernelNanos / 1e9
    // Per task thread: the summed time over the 4 task threads given.
    assert(math.abs(m.group(2).toDouble - summed) <= 0.0005 + 1e-9, summary)
    assert(math.abs(m.group(1).toDouble - summed / 4) <= 0.0005 + 1e-9, summary)
    assert(report.cpuKernelNanos > 0, summary)
  }

  test("a Parquet scan is read as columnar batches and gives the same results") {
    val dir = Files.createTempDirectory("overlap-parquet").resolve("t").toString
    TestData.frame(spark, 5000, 3).write.parquet(dir)
    val df = spark.read.parquet(dir)
    val plan = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution.executedPlan
    assert(ColumnarPlans.columnar(plan) != null, s"not a columnar scan:\n$plan")
    val out = GpuPartitions.map(df, new AllTypesKernel)
    val expected = df.selectExpr(AllTypesKernel.SQL.toIndexedSeq: _*)
    assert(TestData.sorted(out.collectAsList()) == TestData.sorted(expected.collectAsList()))
  }

  test("empty partitions give an empty result") {
    val df = TestData.frame(spark, 100, 4).where("id < 0")
    assert(GpuPartitions.map(df, new AllTypesKernel).count() == 0)
  }

  test("a kernel without a CPU implementation fails saying no GPU was visible and what to set") {
    val e = intercept[SparkException] {
      GpuPartitions.map(TestData.frame(spark, 10, 1), new NoCpuKernel).collect()
    }
    val msg = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage)
      .mkString(" | ")
    assert(msg.contains("No GPU for kernel NoCpuKernel"), msg)
    assert(msg.contains("spark.executor.resource.gpu.amount"), msg)
  }

  test("per-job keys come from the session: noGpu.mode=FAIL refuses the CPU path") {
    spark.conf.set("spark.overlap.noGpu.mode", "FAIL")
    try {
      val e = intercept[SparkException] {
        GpuPartitions.map(TestData.frame(spark, 10, 1), new AllTypesKernel).collect()
      }
      val msg = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
        .map(_.getMessage).mkString(" | ")
      assert(msg.contains("spark.overlap.noGpu.mode=FAIL forbids the CPU path"), msg)
    } finally spark.conf.unset("spark.overlap.noGpu.mode")
    assert(GpuPartitions.map(TestData.frame(spark, 10, 1), new AllTypesKernel).count() == 10)
  }

  test("a report names the busiest stage, its share of the wall and the task threads' waits") {
    val report = PipelineReport.create(spark)
    val secs = (s: Double) => java.lang.Long.valueOf((s * 1e9).toLong)
    val busy = Map(
      PipelineStage.PACK -> secs(8),
      PipelineStage.UPLOAD -> secs(1),
      PipelineStage.COMPUTE -> secs(3),
      PipelineStage.DOWNLOAD -> secs(0.5)
    ).asJava
    report.asInstanceOf[JobReport].addGpuTask(
      new JobReport.GpuTask(dev.overlap.executor.api.InputPath.ROWS, 10, 10, 2, 100, busy, (4 * 1e9).toLong, (2 * 1e9).toLong, 0L))
    val wall = (4 * 1e9).toLong
    // Packing ran on 4 threads: 2 s each, less than compute's 3 s.
    assert(report.bottleneck(4) == PipelineStage.COMPUTE)
    assert(math.abs(report.efficiency(wall, 4) - 0.75) < 1e-9)
    // On one thread packing is the busiest, 8 s of a 4 s wall.
    assert(report.bottleneck(1) == PipelineStage.PACK)
    assert(math.abs(report.efficiency(wall, 1) - 2.0) < 1e-9)
    val summary = report.stageSummary(wall, 4)
    assert(summary.contains("bottleneck: compute"), summary)
    assert(summary.contains("1.000 s waiting for a staging buffer, 0.500 s for GPU results"), summary)
    assert(report.stagingWaitNanos == (4 * 1e9).toLong && report.resultWaitNanos == (2 * 1e9).toLong)
    // A CPU task beside them gets its own line; the stages and the bottleneck stay.
    report.asInstanceOf[JobReport].addCpuTask(5, 5, (2 * 1e9).toLong)
    val mixed = report.stageSummary(wall, 4)
    assert(mixed.contains("  CPU kernel         0.500 s busy (1 task, 2.000 s summed over them"), mixed)
    assert(mixed.contains("bottleneck: compute"), mixed)
  }

  test("a bad per-job value fails the map call, naming the key") {
    spark.conf.set("spark.overlap.batch.maxRows", "-5")
    try {
      val e = intercept[dev.overlap.executor.config.OverlapConfigException] {
        GpuPartitions.map(TestData.frame(spark, 10, 1), new AllTypesKernel)
      }
      assert(e.key == "spark.overlap.batch.maxRows", e.getMessage)
    } finally spark.conf.unset("spark.overlap.batch.maxRows")
  }

  test("a misspelled key set on the session fails the map call, naming the key it meant") {
    spark.conf.set("spark.overlap.batch.maxRow", "5")
    try {
      val e = intercept[OverlapConfigException] {
        GpuPartitions.map(TestData.frame(spark, 10, 1), new AllTypesKernel)
      }
      assert(e.getMessage.contains("'spark.overlap.batch.maxRow'"), e.getMessage)
      assert(e.getMessage.contains("did you mean 'spark.overlap.batch.maxRows'"), e.getMessage)
    } finally spark.conf.unset("spark.overlap.batch.maxRow")
  }

  test("an unsupported column is named before any job starts") {
    val jobsBefore = spark.sparkContext.statusTracker.getJobIdsForGroup(null).length
    val df = spark.createDataFrame(
      java.util.List.of(org.apache.spark.sql.Row(1, java.time.Duration.ofSeconds(5))),
      new StructType().add("n", IntegerType).add("span", DayTimeIntervalType()))
    val e = intercept[IllegalArgumentException](GpuPartitions.map(df, new NoCpuKernel))
    assert(e.getMessage.contains("'span' (interval day to second)"), e.getMessage)
    assert(spark.sparkContext.statusTracker.getJobIdsForGroup(null).length == jobsBefore)
  }
}

/** A bad value or an unknown key fails the application at start, naming the key. */
class OverlapConfigStartupSuite extends AnyFunSuite {
  /** The exception SparkSession creation throws with these settings, and our loggers' events. */
  private def failedStart(settings: (String, String)*): (Throwable, Seq[LogEvent]) = {
    SparkSession.getActiveSession.foreach(_.stop())
    val events = new java.util.concurrent.ConcurrentLinkedQueue[LogEvent]()
    val ctx = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val appender =
      new AbstractAppender("capture", null, null, true, Property.EMPTY_ARRAY) {
        override def append(e: LogEvent): Unit = events.add(e.toImmutable)
      }
    appender.start()
    ctx.getConfiguration.getRootLogger.addAppender(appender, Level.ALL, null)
    ctx.updateLoggers()
    try {
      val e = intercept[Exception] {
        val b = SparkSession
          .builder()
          .master("local[1]")
          .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
          .config("spark.ui.enabled", "false")
        settings.foreach { case (k, v) => b.config(k, v) }
        b.getOrCreate()
      }
      (e, events.asScala.toSeq)
    } finally {
      ctx.getConfiguration.getRootLogger.removeAppender("capture")
      ctx.updateLoggers()
      appender.stop()
    }
  }

  private def causes(e: Throwable): Seq[Throwable] =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq

  /** Events of our own loggers at WARN or above that repeat the text. */
  private def ourWarnings(events: Seq[LogEvent], text: String): Seq[LogEvent] =
    events.filter { ev =>
      val thrown = Option(ev.getThrown).toSeq.flatMap(causes).map(c => String.valueOf(c.getMessage))
      ev.getLoggerName.startsWith("dev.overlap") && ev.getLevel.isMoreSpecificThan(Level.WARN) &&
      (ev.getMessage.getFormattedMessage.contains(text) || thrown.exists(_.contains(text)))
    }

  test("a misspelled spark.overlap key fails SparkContext start naming the key it meant") {
    val (e, events) = failedStart("spark.overlap.prefetch.maxByte" -> "2g")
    val config = causes(e).collectFirst { case c: OverlapConfigException => c }
    assert(config.isDefined, causes(e).map(_.toString).mkString(" | "))
    assert(
      config.get.getMessage == "unknown config key 'spark.overlap.prefetch.maxByte'; did you mean" +
        " 'spark.overlap.prefetch.maxBytes'? (every key: docs/configs.md)")
    assert(ourWarnings(events, "spark.overlap.prefetch.maxByte").isEmpty, events)
    // The capture works: Spark's own report of the failed start is in it.
    assert(events.exists(_.getLoggerName.startsWith("org.apache.spark")), events)
  }

  test("an invalid spark.overlap value fails SparkContext start naming the key") {
    val (e, events) = failedStart("spark.overlap.staging.buffers" -> "-3")
    val msg = causes(e).map(_.getMessage).mkString(" | ")
    assert(msg.contains("spark.overlap.staging.buffers"), msg)
    assert(msg.contains("between 1 and 1024"), msg)
    assert(causes(e).exists(_.isInstanceOf[OverlapConfigException]), msg)
    assert(ourWarnings(events, "spark.overlap.staging.buffers").isEmpty, events)
  }
}

object GpuTestSupport {
  lazy val gpuVisible: Boolean =
    try ai.rapids.cudf.Cuda.getDeviceCount > 0
    catch { case _: Throwable => false }
}
