package dev.overlap.executor.api

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import dev.overlap.executor.testing.{AllTypesKernel, TestData}
import dev.overlap.executor.trace.TraceFiles
import javax.xml.parsers.DocumentBuilderFactory
import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/**
 * spark.overlap.trace.dir in a local Spark session without a GPU: the executor writes its timeline
 * when the SparkContext stops, with one span per partition of the CPU path on its task's thread;
 * unset, nothing is written.
 */
class TraceCpuPathSuite extends AnyFunSuite {

  private def runJob(traceDir: Option[Path]): Unit = {
    val b = SparkSession
      .builder()
      .master("local[2]")
      .appName("trace")
      .config("spark.plugins", "dev.overlap.executor.OverlapPlugin")
      .config("spark.ui.enabled", "false")
    traceDir.foreach(d => b.config("spark.overlap.trace.dir", d.toString))
    val spark = b.getOrCreate()
    try {
      val out = GpuPartitions.map(TestData.frame(spark, 500, 2), new AllTypesKernel)
      assert(out.count() == 500)
    } finally spark.stop()
  }

  test("the executor writes a JSON trace and an SVG when the SparkContext stops") {
    assume(!GpuTestSupport.gpuVisible, "this suite checks the no-GPU path")
    val dir = Files.createTempDirectory("overlap-trace").resolve("out")
    runJob(Some(dir))
    val files = TraceFiles.written().asScala.toList
    assert(files.size == 2, files)
    val names = files.map(_.getFileName.toString)
    val pid = ProcessHandle.current().pid()
    assert(names == List(s"overlap-trace-driver-$pid.json", s"overlap-trace-driver-$pid.svg"))
    files.foreach(f => assert(f.getParent == dir && Files.isRegularFile(f), f))
    val json = new ObjectMapper().readTree(Files.readString(files.head))
    val events = json.get("traceEvents").elements().asScala.toList
    val threads = events
      .filter(e => e.get("ph").asText() == "M" && e.get("name").asText() == "thread_name")
      .map(e => e.get("tid").asInt() -> e.get("args").get("name").asText())
      .toMap
    val spans = events.filter(_.get("ph").asText() == "X")
    assert(spans.size == 2, "a span per partition: " + spans)
    assert(spans.forall(_.get("name").asText() == "cpu"), spans)
    assert(spans.forall(s => threads(s.get("tid").asInt()).startsWith("task thread")), threads)
    assert(spans.map(_.get("args").get("partition").asInt()).toSet == Set(0, 1), spans)
    assert(spans.forall(_.get("args").get("ok").asBoolean()), spans)
    val svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(files(1).toFile)
    assert(svg.getElementsByTagName("rect").getLength == 2)
    assert(!svg.getDocumentElement.getTextContent.contains("no spans recorded"))
  }

  test("without the key nothing is written") {
    assume(!GpuTestSupport.gpuVisible, "this suite checks the no-GPU path")
    runJob(None)
    assert(TraceFiles.written().isEmpty)
  }
}
