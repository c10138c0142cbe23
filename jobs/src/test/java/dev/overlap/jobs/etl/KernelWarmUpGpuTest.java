package dev.overlap.jobs.etl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.rapids.cudf.ColumnVector;
import ai.rapids.cudf.HostColumnVector;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.Table;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.jobs.TestSessions;
import dev.overlap.jobs.tpch.TpchTables;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * etl's kernel warm-up on the GPU: its made-up rows pass Q1's and Q6's filters (so the warm-up
 * reaches their aggregations, whose kernels are the ones worth loading early), and the warm-up
 * thread ends, leaving no device memory behind. It fails, never skips, where the executor does not
 * run on a GPU.
 */
@Tag("gpu")
public class KernelWarmUpGpuTest {
  static SparkSession spark;
  static Dataset<Row> lineitem;
  static EtlShape shape;

  @BeforeAll
  static void start() {
    spark = TestSessions.withPlugin("local[2]", "spark.overlap.noGpu.mode", "FAIL");
    lineitem = spark.createDataFrame(List.<Row>of(), TpchTables.LINEITEM);
    shape = EtlShape.of(lineitem);
  }

  @AfterAll
  static void stop() {
    if (spark == null) {
      return;
    }
    try {
      assertEquals(0, Rmm.getTotalBytesAllocated(), "device memory leaked");
    } finally {
      spark.stop();
    }
  }

  @Test
  void theMadeUpRowsReachQ1sGroupsAndQ6sSum() {
    assertTrue(GpuStatus.current().gpu(), GpuStatus.current().reason());
    var q1In = lineitem.selectExpr(shape.select(Q1Kernel.INPUT)).schema();
    var q6In = lineitem.selectExpr(shape.select(Q6Kernel.INPUT)).schema();
    try (Table in = KernelWarmUp.madeUp(q1In);
        Table out = new Q1Kernel(shape).apply(in)) {
      assertTrue(out.getRowCount() >= 4, "Q1's groups: " + out.getRowCount());
      try (HostColumnVector count = out.getColumn(out.getNumberOfColumns() - 1).copyToHost()) {
        long rows = 0;
        for (int i = 0; i < count.getRowCount(); i++) {
          rows += count.getLong(i);
        }
        assertTrue(rows > 0, "rows through Q1's filter");
      }
    }
    try (Table in = KernelWarmUp.madeUp(q6In);
        Table out = new Q6Kernel(shape).apply(in);
        ColumnVector revenue = out.getColumn(0).incRefCount();
        HostColumnVector h = revenue.copyToHost()) {
      assertFalse(h.isNull(0), "Q6's revenue over rows its filter kept");
    }
  }

  @Test
  void theWarmUpEnds() {
    KernelWarmUp w = KernelWarmUp.etl(lineitem, shape);
    w.await();
    assertFalse(w.running(), "the warm-up thread still runs after its wait");
  }
}
