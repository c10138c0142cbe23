package dev.overlap.executor.pipeline;

import dev.overlap.executor.api.PipelineStage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads of one {@link StagePipeline}: its upload thread, its compute threads and its download
 * threads, which lane each compute and download thread serves, and how they all start and stop.
 *
 * <p>Starting: when a thread fails to start (the JVM has no room for another native thread), the
 * ones already started are stopped and waited for as by {@link #stop} before the failure
 * propagates, so that no thread of a pipeline that was never made runs on.
 */
final class PipelineThreads {
  private static final Logger LOG = LoggerFactory.getLogger(StagePipeline.class);

  private final StageThread uploader;
  private final List<StageThread> computers;
  private final List<StageThread> downloaders;
  private final List<StageThread> workers;
  // Open lanes per compute thread and per download thread. Each guarded by itself.
  private final int[] lanesPerComputer;
  private final int[] lanesPerDownloader;
  private final String name;
  private final Runnable threadInit;
  private final long logEveryNanos;
  private final long giveUpNanos;
  private StallWatch watch; // guarded by this

  /**
   * Makes the threads and starts each with {@code start} ({@link Thread#start} but in tests).
   *
   * @throws RuntimeException what {@code start} threw (or an Error), once the threads it had
   *     started have ended or the wait for them gave up
   */
  PipelineThreads(StagePipeline pipeline, StagePipeline.Threads shape, Consumer<Thread> start) {
    this.name = shape.name();
    int downloadThreads = shape.downloadThreads();
    this.threadInit = shape.threadInit();
    this.logEveryNanos = shape.logEvery().toNanos();
    this.giveUpNanos = shape.giveUpAfter().toNanos();
    List<StageThread> down = new ArrayList<>();
    for (int i = 0; i < downloadThreads; i++) {
      // The first keeps the plain name: one download thread is the common case.
      String n = name + "-download" + (i == 0 ? "" : "-" + (i + 1));
      down.add(
          new StageThread(pipeline, n, PipelineStage.DOWNLOAD, this.threadInit, Batch::deliver));
    }
    this.downloaders = List.copyOf(down);
    this.lanesPerDownloader = new int[downloadThreads];
    List<StageThread> comp = new ArrayList<>();
    for (int i = 0; i < shape.computeThreads(); i++) {
      String n = name + "-compute" + (i == 0 ? "" : "-" + (i + 1));
      comp.add(
          new StageThread(
              pipeline,
              n,
              PipelineStage.COMPUTE,
              threadInit,
              b -> downloaders.get(b.lane().downloader()).offer(b)));
    }
    this.computers = List.copyOf(comp);
    this.lanesPerComputer = new int[computers.size()];
    this.uploader =
        new StageThread(
            pipeline,
            name + "-upload",
            PipelineStage.UPLOAD,
            threadInit,
            b -> computers.get(b.lane().computer()).offer(b));
    List<StageThread> all = new ArrayList<>(List.of(uploader));
    all.addAll(computers);
    all.addAll(downloaders);
    this.workers = List.copyOf(all);
    try {
      downloaders.forEach(start);
      computers.forEach(start);
      start.accept(uploader);
    } catch (RuntimeException | Error e) {
      List<StageThread> started = workers.stream().filter(Thread::isAlive).toList();
      LOG.error(
          "{}: a pipeline thread failed to start; stopping the {} started before it",
          name,
          started.size(),
          e);
      stop(started);
      throw e;
    }
  }

  int downloadThreads() {
    return downloaders.size();
  }

  int computeThreads() {
    return computers.size();
  }

  /** The download thread of a lane that opens: the one serving the fewest open lanes. */
  int nextDownloader() {
    return leastLoaded(lanesPerDownloader);
  }

  /** The compute thread of a lane that opens: the one serving the fewest open lanes. */
  int nextComputer() {
    return leastLoaded(lanesPerComputer);
  }

  /**
   * A lane served by compute thread {@code computer} and download thread {@code downloader} closed.
   */
  void laneClosed(int computer, int downloader) {
    synchronized (lanesPerComputer) {
      lanesPerComputer[computer]--;
    }
    synchronized (lanesPerDownloader) {
      lanesPerDownloader[downloader]--;
    }
  }

  /** The index with the fewest open lanes in {@code lanes} (the lowest on a tie), counted in. */
  private static int leastLoaded(int[] lanes) {
    synchronized (lanes) {
      int best = 0;
      for (int i = 1; i < lanes.length; i++) {
        if (lanes[i] < lanes[best]) {
          best = i;
        }
      }
      lanes[best]++;
      return best;
    }
  }

  /** Queues {@code b} for the upload thread. */
  void upload(Batch<?> b) {
    uploader.offer(b);
  }

  /**
   * After a device allocation failed in {@code stage}: waits until the batches ahead of {@code b}
   * in the later stages are done (their device memory freed, their budget bytes back), so that the
   * stage can run again with what they held. After upload: until the compute and download threads
   * are idle (nothing new reaches them meanwhile). After compute: until the batches the download
   * threads had been given by then have gone on; the other compute threads keep handing them more,
   * which a wait for idle threads would wait for too.
   *
   * @return false when {@code closed} turns true or {@code b}'s task ends first
   */
  boolean drainAfter(PipelineStage stage, Batch<?> b, BooleanSupplier closed) {
    BooleanSupplier waiting;
    if (stage == PipelineStage.COMPUTE) {
      long[] marks = downloadMarks();
      waiting = () -> !downloadsPast(marks);
    } else {
      waiting = () -> busyAfter(stage);
    }
    while (waiting.getAsBoolean()) {
      if (closed.getAsBoolean() || !b.lane().isLive(b)) {
        return false;
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // only close interrupts a stage thread
        return false;
      }
    }
    return true;
  }

  /** Whether a thread of a stage after {@code stage} has a batch queued or running. */
  private boolean busyAfter(PipelineStage stage) {
    return downloaders.stream().anyMatch(StageThread::busy)
        || (stage == PipelineStage.UPLOAD && computers.stream().anyMatch(StageThread::busy));
  }

  /** Each download thread's {@link StageThread#mark} now. */
  private long[] downloadMarks() {
    long[] m = new long[downloaders.size()];
    for (int i = 0; i < m.length; i++) {
      m[i] = downloaders.get(i).mark();
    }
    return m;
  }

  /** Whether every download thread is {@link StageThread#past} its mark in {@code marks}. */
  private boolean downloadsPast(long[] marks) {
    for (int i = 0; i < marks.length; i++) {
      if (!downloaders.get(i).past(marks[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * Starts watching every stage thread for a stage that runs on one batch longer than {@code after}
   * ({@link StallWatch}); {@link #stop} ends the watch first.
   *
   * @throws IllegalStateException when already watched
   */
  synchronized void watch(Duration after, String bound, Consumer<StageStallException> onStall) {
    if (watch != null) {
      throw new IllegalStateException(name + ": stalls are already watched");
    }
    StallWatch w = new StallWatch(name + "-stall-watch", workers, after, bound, onStall);
    w.start();
    watch = w;
  }

  /**
   * Stops every thread and waits for each (see {@link StagePipeline} for one that does not end);
   * once all ended, abandons on this thread what was queued after its thread emptied its queue.
   */
  void stop() {
    StallWatch w;
    synchronized (this) {
      w = watch;
    }
    if (w != null) {
      // A stage still running while the pipeline closes is close's to wait for, not a stall.
      w.finish(TimeUnit.NANOSECONDS.toMillis(giveUpNanos));
    }
    stop(workers);
    if (ended() && workers.stream().anyMatch(StageThread::hasQueued)) {
      // Offered after their thread emptied its queue (by the stage before it).
      StageThread.runInit(threadInit, "closing thread");
      workers.forEach(StageThread::drain);
    }
  }

  private void stop(List<StageThread> threads) {
    threads.forEach(StageThread::requestStop);
    long deadline = System.nanoTime() + giveUpNanos;
    threads.forEach(w -> w.await(deadline, logEveryNanos));
  }

  /** Whether every thread has ended. */
  boolean ended() {
    return workers.stream().noneMatch(Thread::isAlive);
  }
}
