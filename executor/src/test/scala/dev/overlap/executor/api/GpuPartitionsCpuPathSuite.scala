package dev.overlap.executor.api

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import dev.overlap.executor.pipeline.Stage
import dev.overlap.executor.spark.PartitionRunner
import dev.overlap.executor.testing.{AllTypesKernel, NoCpuKernel, TestData}
import org.apache.spark.SparkException
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.{ArrayType, IntegerType, StringType, StructType}
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
    val expected = df.selectExpr(AllTypesKernel.SQL: _*)
    assert(TestData.sorted(out.collectAsList()) == TestData.sorted(expected.collectAsList()))
    assert(report.cpuTasks == 4 && report.gpuTasks == 0)
    assert(report.rowsIn == 3000 && report.rowsOut == 3000)
  }

  test("a Parquet scan is read as columnar batches and gives the same results") {
    val dir = Files.createTempDirectory("overlap-parquet").resolve("t").toString
    TestData.frame(spark, 5000, 3).write.parquet(dir)
    val df = spark.read.parquet(dir)
    val plan = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution.executedPlan
    assert(PartitionRunner.columnarChild(plan) != null, s"not a columnar scan:\n$plan")
    val out = GpuPartitions.map(df, new AllTypesKernel)
    val expected = df.selectExpr(AllTypesKernel.SQL: _*)
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
      Stage.PACK -> secs(8),
      Stage.UPLOAD -> secs(1),
      Stage.COMPUTE -> secs(3),
      Stage.DOWNLOAD -> secs(0.5)
    ).asJava
    report.addTask(true, 10, 10, 2, 100, busy, (4 * 1e9).toLong, (2 * 1e9).toLong)
    val wall = (4 * 1e9).toLong
    // Packing ran on 4 threads: 2 s each, less than compute's 3 s.
    assert(report.bottleneck(4) == Stage.COMPUTE)
    assert(math.abs(report.efficiency(wall, 4) - 0.75) < 1e-9)
    // On one thread packing is the busiest, 8 s of a 4 s wall.
    assert(report.bottleneck(1) == Stage.PACK)
    assert(math.abs(report.efficiency(wall, 1) - 2.0) < 1e-9)
    val summary = report.stageSummary(wall, 4)
    assert(summary.contains("bottleneck: compute"), summary)
    assert(summary.contains("1.000 s waiting for a staging buffer, 0.500 s for GPU results"), summary)
    assert(report.stagingWaitNanos == (4 * 1e9).toLong && report.resultWaitNanos == (2 * 1e9).toLong)
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

  test("an unsupported column is named before any job starts") {
    val jobsBefore = spark.sparkContext.statusTracker.getJobIdsForGroup(null).length
    val df = spark.createDataFrame(
      java.util.List.of(org.apache.spark.sql.Row(1, Seq("a"))),
      new StructType().add("n", IntegerType).add("tags", ArrayType(StringType)))
    val e = intercept[IllegalArgumentException](GpuPartitions.map(df, new NoCpuKernel))
    assert(e.getMessage.contains("'tags' (array<string>)"), e.getMessage)
    assert(spark.sparkContext.statusTracker.getJobIdsForGroup(null).length == jobsBefore)
  }
}

/** A bad value fails the application at start, naming the key. */
class OverlapConfigStartupSuite extends AnyFunSuite {
  test("an invalid spark.overlap value fails SparkContext start naming the key") {
    SparkSession.getActiveSession.foreach(_.stop())
    val e = intercept[Exception] {
      SparkSession
        .builder()
        .master("local[1]")
        .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
        .config("spark.ui.enabled", "false")
        .config("spark.overlap.staging.buffers", "-3")
        .getOrCreate()
    }
    val msg = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage)
      .mkString(" | ")
    assert(msg.contains("spark.overlap.staging.buffers"), msg)
    assert(msg.contains("between 1 and 1024"), msg)
  }
}

object GpuTestSupport {
  lazy val gpuVisible: Boolean =
    try ai.rapids.cudf.Cuda.getDeviceCount > 0
    catch { case _: Throwable => false }
}
