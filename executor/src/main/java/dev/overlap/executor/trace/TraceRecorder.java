package dev.overlap.executor.trace;

import dev.overlap.executor.pipeline.StageListener;
import dev.overlap.executor.pipeline.StageRun;
import dev.overlap.executor.resource.TaskTag;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records every stage that ends as a span on a track: one track per task thread (packing, and a
 * partition through a kernel's CPU implementation) and one each for the pipeline's upload, compute
 * and download threads (with several compute or download threads, one track per thread, numbered as
 * they first appear). Keeps at most {@code maxSpans} spans and counts the rest as dropped. {@link
 * TraceOutput} writes what it holds.
 *
 * <p>Times are the {@link System#nanoTime} readings the callers pass, relative to {@code
 * originNanos}; a test passes its own.
 */
public final class TraceRecorder implements StageListener {
  /** The most spans an executor keeps: about 100 MB of heap. */
  public static final int DEFAULT_MAX_SPANS = 1_000_000;

  /** The first track id of task threads; the pipeline's tracks come before. */
  static final int FIRST_TASK_TRACK = 1000;

  /** The track id of the second compute thread; the first has the compute thread's track. */
  private static final int SECOND_COMPUTE_TRACK = 200;

  /** One stage of one batch, or one partition on the CPU path ({@code batch} 0, no bytes). */
  public record Span(
      SpanKind kind,
      int track,
      long taskId,
      int partition,
      String taskName,
      long batch,
      long bytes,
      long startNanos,
      long endNanos,
      boolean ok) {}

  /**
   * A row of the timeline.
   *
   * @param order where it is drawn, lowest first
   */
  public record Track(int id, String name, int order) {}

  /** What a recorder held at one moment. */
  public record Timeline(
      List<Track> tracks, List<Span> spans, long dropped, int maxSpans, long originNanos) {}

  private final long originNanos;
  private final int maxSpans;
  private final List<Span> spans = new ArrayList<>();
  private final Map<Long, Track> taskTracks = new HashMap<>();
  private final Map<Long, Track> computeTracks = new HashMap<>();
  private final Map<Long, Track> downloadTracks = new HashMap<>();
  private long dropped;

  public TraceRecorder(long originNanos, int maxSpans) {
    if (maxSpans < 0) {
      throw new IllegalArgumentException("maxSpans must not be negative: " + maxSpans);
    }
    this.originNanos = originNanos;
    this.maxSpans = maxSpans;
  }

  /** The pipeline thread's track of {@code kind}; packing and the CPU path run on task threads. */
  static Track pipelineTrack(SpanKind kind) {
    return switch (kind) {
      case UPLOAD -> new Track(1, "upload thread", 1_000_001);
      case COMPUTE -> new Track(2, "compute thread", 1_000_100);
      case DOWNLOAD -> new Track(3, "download thread", 1_000_200);
      case PACK, CPU -> throw new IllegalArgumentException(kind.label() + " runs on task threads");
    };
  }

  @Override
  public void stageStarted(StageRun run) {}

  @Override
  public void stageEnded(StageRun run, long endNanos, boolean ok) {
    add(
        SpanKind.of(run.stage()),
        run.task(),
        run.batch(),
        run.bytes(),
        run.startNanos(),
        endNanos,
        ok);
  }

  /**
   * Records one partition through a kernel's CPU implementation, on the track of the calling task
   * thread.
   *
   * @param ok false when the task failed
   */
  public void cpuPartition(TaskTag task, long startNanos, long endNanos, boolean ok) {
    add(SpanKind.CPU, task, 0, 0, startNanos, endNanos, ok);
  }

  private void add(
      SpanKind kind,
      TaskTag task,
      long batch,
      long bytes,
      long startNanos,
      long endNanos,
      boolean ok) {
    long threadId = Thread.currentThread().getId();
    synchronized (this) {
      if (spans.size() >= maxSpans) {
        dropped++;
        return;
      }
      int track;
      if (kind.onTaskThread()) {
        track =
            taskTracks
                .computeIfAbsent(
                    threadId,
                    t -> {
                      int n = taskTracks.size();
                      return new Track(FIRST_TASK_TRACK + n, "task thread " + (n + 1), n);
                    })
                .id();
      } else if (kind == SpanKind.COMPUTE) {
        track = threadTrack(computeTracks, kind, SECOND_COMPUTE_TRACK - 1, threadId).id();
      } else if (kind == SpanKind.DOWNLOAD) {
        int second = pipelineTrack(kind).id() + 1;
        track = threadTrack(downloadTracks, kind, second - 1, threadId).id();
      } else {
        track = pipelineTrack(kind).id();
      }
      spans.add(
          new Span(
              kind,
              track,
              task.taskId(),
              task.partition(),
              task.name(),
              batch,
              bytes,
              startNanos,
              endNanos,
              ok));
    }
  }

  /**
   * The track of the compute or download thread {@code threadId}: the first one of its kind seen
   * has the kind's track, the {@code n}th after it id {@code base + n} (ids below {@link
   * #FIRST_TASK_TRACK}: at most 64 threads of a kind).
   */
  private static Track threadTrack(Map<Long, Track> seen, SpanKind kind, int base, long threadId) {
    return seen.computeIfAbsent(
        threadId,
        t -> {
          int n = seen.size();
          Track first = pipelineTrack(kind);
          return n == 0
              ? first
              : new Track(base + n, kind.label() + " thread " + (n + 1), first.order() + n);
        });
  }

  /** A copy of what is recorded: the task threads' tracks in order of appearance, then the rest. */
  public synchronized Timeline timeline() {
    List<Track> tracks = new ArrayList<>(taskTracks.values());
    for (SpanKind k : new SpanKind[] {SpanKind.UPLOAD, SpanKind.COMPUTE, SpanKind.DOWNLOAD}) {
      tracks.add(pipelineTrack(k));
    }
    for (Map<Long, Track> seen : List.of(computeTracks, downloadTracks)) {
      seen.values().stream().filter(t -> !tracks.contains(t)).forEach(tracks::add);
    }
    tracks.sort(Comparator.comparingInt(Track::order));
    return new Timeline(List.copyOf(tracks), List.copyOf(spans), dropped, maxSpans, originNanos);
  }
}
