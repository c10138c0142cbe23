package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.jobs.Main;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.cli.JobSummary;
import dev.overlap.jobs.delta.JobInput;
import dev.overlap.jobs.tpch.TpchGenerate;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * etl's two engines over the same input write the same output: the same folders, column names,
 * types and values ({@link EtlInputs#assertSame}: exact, doubles up to the order of summation). On
 * the embedded default data (TPC-H SF 0.01) and on lineitem tables of other generators' types.
 */
public class EtlEnginesTest {
  @TempDir static Path tmp;
  static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]", "spark.sql.shuffle.partitions", "4");
  }

  @AfterAll
  static void stop() {
    spark.stop();
  }

  @Test
  void sparkSqlWritesWhatOverlapWritesOnTheDefaultData() {
    String data = tmp.resolve("default").toString();
    TpchGenerate.run(
        spark,
        Main.DEFAULT_SCALE,
        data,
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
        false);
    assertSameOutputs(data + "/lineitem", "default");
  }

  @Test
  void q1AndQ6RunOneStageEachAndTheirResultsNoFurtherJob() {
    EtlInputs.Kinds k = otherGenerators().findFirst().orElseThrow();
    // A folder of its own: the parameterized test below writes the same kind into tmp.
    Path dir = tmp.resolve("one-stage");
    EtlInputs.write(spark, dir, k, 500, 7);
    Dataset<Row> lineitem = spark.read().parquet(dir.resolve(k.name()).toString());
    EtlShape shape = EtlShape.of(lineitem);
    KernelQueries.Planned q1 =
        KernelQueries.planQ1(
            lineitem, shape, dev.overlap.executor.api.PipelineReport.create(spark));
    KernelQueries.Planned q6 =
        KernelQueries.planQ6(
            lineitem, shape, dev.overlap.executor.api.PipelineReport.create(spark));
    StageCount count = StageCount.on(spark);
    Dataset<Row> r1 = q1.run();
    assertEquals(List.of(1, 1), count.jobsAndStages(), "Q1's kernels and partials");
    Dataset<Row> r6 = q6.run();
    assertEquals(List.of(2, 2), count.jobsAndStages(), "Q6's kernels and partials");
    // Reading the results runs nothing more: they are local.
    r1.collectAsList();
    r6.collectAsList();
    r6.show();
    assertEquals(List.of(2, 2), count.jobsAndStages(), "the results read");
    count.close();
    assertEquals(SqlQueries.q1(lineitem, shape).schema(), r1.schema());
    assertEquals(SqlQueries.q6(lineitem, shape).schema(), r6.schema());
    EtlInputs.assertSame(SqlQueries.q1(lineitem, shape), r1, "Q1");
    EtlInputs.assertSame(SqlQueries.q6(lineitem, shape), r6, "Q6");
  }

  static Stream<EtlInputs.Kinds> otherGenerators() {
    return EtlInputs.cases().stream()
        .filter(
            k ->
                List.of(
                        "doubles",
                        "float_price_int_rest",
                        "decimal_30_10_large",
                        "upper_case_names")
                    .contains(k.name()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("otherGenerators")
  void sparkSqlWritesWhatOverlapWritesOnOtherGeneratorsTables(EtlInputs.Kinds k) {
    EtlInputs.write(spark, tmp, k, 2000, k.name().hashCode());
    assertSameOutputs(tmp.resolve(k.name()).toString(), k.name());
  }

  @Test
  void theEngineLineTellsTheRapidsAcceleratorsOperatorsFromSparksOwn() {
    assertTrue(
        RapidsAccelerator.gpuOperators(
            "AdaptiveSparkPlan isFinalPlan=true\n"
                + "+- == Final Plan ==\n"
                + "   GpuColumnarToRow false\n"
                + "   +- GpuSort [l_returnflag#4 ASC NULLS FIRST], true\n"
                + "      +- GpuHashAggregate(keys=[l_returnflag#4], functions=[gpusum(l_tax#3)])"));
    assertTrue(RapidsAccelerator.gpuOperators("*(1) Project [x#1]\n:- GpuProject [x#1]\n"));
    assertFalse(
        RapidsAccelerator.gpuOperators(
            "*(2) HashAggregate(keys=[l_returnflag#4], functions=[sum(l_tax#3)])\n"
                + "+- FileScan parquet [l_tax#3] Location: InMemoryFileIndex(1 paths)"
                + "[file:/data/GpuRuns/lineitem], ReadSchema: struct<GpuNotes:string>"));
  }

  /** Runs etl with each engine over {@code input} and compares what they wrote and said. */
  static void assertSameOutputs(String input, String name) {
    Path overlap = tmp.resolve(name + "-overlap");
    Path sql = tmp.resolve(name + "-spark-sql");
    JobSummary overlapSummary = new JobSummary("etl");
    JobSummary sqlSummary = new JobSummary("etl");
    long overlapRows =
        EtlJob.run(
            spark, JobInput.parquet(input), overlap.toString(), EtlJob.OVERLAP, 2, overlapSummary);
    long sqlRows =
        EtlJob.run(spark, JobInput.parquet(input), sql.toString(), EtlJob.SPARK_SQL, 2, sqlSummary);
    // --repeat 2: one warm run of each query more, timed, on either engine.
    for (JobSummary s : List.of(overlapSummary, sqlSummary)) {
      String text = s.render(overlapRows, 1);
      assertTrue(text.matches("(?s).*Q1 again +\\d+\\.\\d\\d s median of 1 warm runs.*"), text);
      assertTrue(text.matches("(?s).*Q6 again +\\d+\\.\\d\\d s median of 1 warm runs.*"), text);
    }
    assertEquals(overlapRows, sqlRows, name + ": rows written");
    assertEquals(folders(overlap), folders(sql), name + ": output folders");
    for (String q : List.of("q1", "q6")) {
      Dataset<Row> a = spark.read().parquet(overlap.resolve(q).toString());
      Dataset<Row> b = spark.read().parquet(sql.resolve(q).toString());
      assertEquals(List.of(a.columns()), List.of(b.columns()), name + " " + q + ": columns");
      if (q.equals("q1")) {
        a = a.orderBy("l_returnflag", "l_linestatus");
        b = b.orderBy("l_returnflag", "l_linestatus");
      }
      EtlInputs.assertSame(a, b, name + " " + q);
    }
    String o = overlapSummary.render(overlapRows, 2);
    String s = sqlSummary.render(sqlRows, 2);
    assertTrue(o.contains("\nengine         overlap (Overlap's kernels"), o);
    assertTrue(o.contains(" tasks on the CPU, "), o);
    assertTrue(
        s.contains(
            "\nengine         spark-sql (Spark SQL's aggregations, on Spark's own CPU operators)\n"),
        s);
    assertFalse(s.contains("\npath "), "no kernel ran:\n" + s);
  }

  private static List<String> folders(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted().toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void theOverlapEnginesTailLeavesRapidsOutAndPutsItsSettingBack() {
    var conf = spark.newSession().conf();
    String key = "spark.rapids.sql.enabled";
    Runnable restore =
        RapidsAccelerator.withoutRapids(
            "com.nvidia.spark.SQLPlugin, dev.overlap.executor.OverlapPlugin", conf);
    org.junit.jupiter.api.Assertions.assertEquals("false", conf.get(key));
    restore.run();
    org.junit.jupiter.api.Assertions.assertTrue(conf.getOption(key).isEmpty());
    conf.set(key, "true");
    restore = RapidsAccelerator.withoutRapids("com.nvidia.spark.SQLPlugin", conf);
    org.junit.jupiter.api.Assertions.assertEquals("false", conf.get(key));
    restore.run();
    org.junit.jupiter.api.Assertions.assertEquals("true", conf.get(key));
    // Without RAPIDS in spark.plugins nothing is touched.
    conf.unset(key);
    RapidsAccelerator.withoutRapids("dev.overlap.executor.OverlapPlugin", conf);
    org.junit.jupiter.api.Assertions.assertTrue(conf.getOption(key).isEmpty());
    org.junit.jupiter.api.Assertions.assertFalse(
        RapidsAccelerator.inPlugins("x.com.nvidia.spark.SQLPlugin"));
  }
}
