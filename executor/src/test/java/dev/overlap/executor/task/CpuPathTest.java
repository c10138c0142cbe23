package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.CpuKernel;
import dev.overlap.executor.trace.SpanKind;
import dev.overlap.executor.trace.TraceRecorder;
import dev.overlap.executor.trace.TraceRecorder.Span;
import dev.overlap.executor.trace.TraceRecorder.Timeline;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.TaskContext$;
import org.apache.spark.TaskContextImpl;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import scala.Option;

/** The CPU path's rows and its span in the timeline, without a Spark session. */
class CpuPathTest {
  private static final StructType SCHEMA = new StructType().add("n", DataTypes.LongType);

  /** Doubles each value, lazily. */
  private static final CpuKernel DOUBLE =
      rows ->
          new Iterator<>() {
            @Override
            public boolean hasNext() {
              return rows.hasNext();
            }

            @Override
            public Row next() {
              return RowFactory.create(2 * rows.next().getLong(0));
            }
          };

  private static Iterator<InternalRow> input(int n) {
    List<InternalRow> rows = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      rows.add(new GenericInternalRow(new Object[] {i}));
    }
    return rows.iterator();
  }

  private static Iterator<InternalRow> run(TraceRecorder trace, TaskContextImpl ctx, int n) {
    return CpuPath.run(DOUBLE, SCHEMA, SCHEMA, null, trace, ctx, input(n));
  }

  @Test
  void aPartitionRunToItsEndIsOneCpuSpanOnTheTaskThreadsTrack() {
    TraceRecorder trace = new TraceRecorder(0, 100);
    long before = System.nanoTime();
    Iterator<InternalRow> out = run(trace, null, 5);
    assertEquals(0, trace.timeline().spans().size(), "no span before the partition ends");
    List<Long> values = new ArrayList<>();
    out.forEachRemaining(r -> values.add(r.getLong(0)));
    assertEquals(List.of(0L, 2L, 4L, 6L, 8L), values);
    assertFalse(out.hasNext());
    Timeline t = trace.timeline();
    assertEquals(1, t.spans().size(), "one span per partition: " + t.spans());
    Span s = t.spans().get(0);
    assertEquals(SpanKind.CPU, s.kind());
    assertTrue(s.ok());
    assertTrue(before <= s.startNanos() && s.startNanos() <= s.endNanos(), s.toString());
    assertTrue(s.endNanos() <= System.nanoTime());
    assertEquals("task", s.taskName());
    assertEquals(
        "task thread 1",
        t.tracks().stream().filter(k -> k.id() == s.track()).findFirst().orElseThrow().name());
  }

  @Test
  void aSparkTaskIsNamedAndItsSpanIsRecordedOnce() {
    TraceRecorder trace = new TraceRecorder(0, 100);
    TaskContextImpl ctx = TaskContext$.MODULE$.empty();
    Iterator<InternalRow> out = run(trace, ctx, 3);
    out.forEachRemaining(r -> {});
    ctx.markTaskCompleted(Option.empty());
    List<Span> spans = trace.timeline().spans();
    assertEquals(1, spans.size(), spans.toString());
    assertTrue(spans.get(0).ok());
    assertEquals("stage 0 partition 0 task 0", spans.get(0).taskName());
  }

  @Test
  void aTaskThatFailsBeforeItsOutputEndsRecordsAFailedSpanWhenItCompletes() {
    TraceRecorder trace = new TraceRecorder(0, 100);
    TaskContextImpl ctx = TaskContext$.MODULE$.empty();
    Iterator<InternalRow> out = run(trace, ctx, 10);
    out.next();
    assertEquals(0, trace.timeline().spans().size());
    RuntimeException e = new RuntimeException("downstream failed");
    ctx.markTaskFailed(e);
    ctx.markTaskCompleted(Option.apply(e));
    List<Span> spans = trace.timeline().spans();
    assertEquals(1, spans.size(), spans.toString());
    assertEquals(SpanKind.CPU, spans.get(0).kind());
    assertFalse(spans.get(0).ok());
  }

  @Test
  void withoutARecorderNothingIsRecordedAndRowsStillFlow() {
    Iterator<InternalRow> out = CpuPath.run(DOUBLE, SCHEMA, SCHEMA, null, null, null, input(2));
    assertEquals(0, out.next().getLong(0));
    assertEquals(2, out.next().getLong(0));
    assertFalse(out.hasNext());
  }
}
