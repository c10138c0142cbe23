package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pipeline.BatchSource;
import dev.overlap.executor.pipeline.BatchStages;
import dev.overlap.executor.pipeline.BoundedPool;
import dev.overlap.executor.pipeline.DeviceBudget;
import dev.overlap.executor.pipeline.OutOfDeviceMemoryException;
import dev.overlap.executor.pipeline.PackedBatch;
import dev.overlap.executor.pipeline.PipelineTaskException;
import dev.overlap.executor.pipeline.ResultBatch;
import dev.overlap.executor.pipeline.StagePipeline;
import dev.overlap.executor.pipeline.TaskDriver;
import dev.overlap.executor.resource.BatchTracker;
import dev.overlap.executor.resource.TaskTag;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * A soak of the real task path ({@link TaskDriver} over one {@link StagePipeline}, a {@link
 * DeviceBudget} and a {@link BoundedPool} of staging buffers) with plain Java stages: 1000 tasks on
 * eight task threads, of which a seeded tenth fail at a random stage, are killed midway, or hit an
 * injected device allocation failure in upload or compute: once (the retry after the drain
 * succeeds), until the batch is split small enough, or whatever its size (the task fails with the
 * one line). Every other task's rows must be exact and in order; at the end nothing may be held
 * (budget, staging buffers, values, tracked batches), and every killed task's thread must have
 * stopped waiting soon after the kill.
 */
class PipelineSoakTest {
  private static final long SEED = Long.getLong("soak.seed", 20_251_130L);
  private static final int TASKS = Integer.getInteger("soak.tasks", 1000);
  private static final int THREADS = 8;
  private static final int BUFFERS = 4;
  private static final long BUDGET = 160;
  private static final long KILL_BOUND_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** What happens to a task. */
  enum Fate {
    NORMAL,
    FAILS,
    KILLED,
    /** The first allocation of one batch's stage fails; the retry succeeds. */
    OOM_ONCE,
    /** One batch's stage fits a third of its rows: it is split until its parts fit. */
    OOM_SPLIT,
    /** One batch's stage fits no row: the task fails. */
    OOM_NEVER;

    boolean outOfMemory() {
      return this == OOM_ONCE || this == OOM_SPLIT || this == OOM_NEVER;
    }

    boolean readsEveryRow() {
      return this == NORMAL || this == OOM_ONCE || this == OOM_SPLIT;
    }
  }

  /**
   * One task's script: its input, and where it goes wrong.
   *
   * @param stage where a FAILS or OOM task's fault is injected
   * @param at the batch it is injected in
   * @param killAfterMillis when a KILLED task is killed, from its start
   * @param interrupt whether the kill also interrupts the task's thread (Spark's interruptOnCancel)
   */
  record Plan(
      int id,
      int batches,
      int rowsPerBatch,
      Fate fate,
      PipelineStage stage,
      int at,
      int killAfterMillis,
      boolean interrupt) {

    long row(long i) {
      return id * 1_000_003L + i * 7919L;
    }

    static long out(long v) {
      return v * 31 + 7;
    }

    List<Long> expected() {
      return LongStream.range(0, (long) batches * rowsPerBatch)
          .map(i -> out(row(i)))
          .boxed()
          .toList();
    }

    boolean faultAt(PipelineStage s, int batch) {
      return (fate == Fate.FAILS || fate.outOfMemory()) && stage == s && at == batch;
    }
  }

  static List<Plan> plans(Random r) {
    PipelineStage[] faultStages = {
      PipelineStage.PACK, PipelineStage.UPLOAD, PipelineStage.COMPUTE, PipelineStage.DOWNLOAD
    };
    PipelineStage[] memoryStages = {PipelineStage.UPLOAD, PipelineStage.COMPUTE};
    List<Plan> plans = new ArrayList<>();
    for (int id = 0; id < TASKS; id++) {
      int batches = 1 + r.nextInt(6);
      int rows = 1 + r.nextInt(40);
      Fate fate = Fate.NORMAL;
      if (r.nextInt(10) == 0) {
        fate = Fate.values()[1 + r.nextInt(Fate.values().length - 1)];
      }
      PipelineStage stage =
          fate.outOfMemory()
              ? memoryStages[r.nextInt(memoryStages.length)]
              : faultStages[r.nextInt(faultStages.length)];
      plans.add(
          new Plan(
              id, batches, rows, fate, stage, r.nextInt(batches), r.nextInt(40), r.nextBoolean()));
    }
    return plans;
  }

  // ---- fakes ------------------------------------------------------------------------------------

  /** Every fake value opened and not yet closed, all tasks together. */
  private final AtomicInteger open = new AtomicInteger();

  /** A staging buffer. */
  static final class Buf implements AutoCloseable {
    @Override
    public void close() {}
  }

  /** A value that counts itself open, is tracked in debug mode, and refuses a second close. */
  class Held implements AutoCloseable {
    final Plan plan;
    final int batch;
    final long[] values;
    private final BatchTracker.Held tracked = BatchTracker.made(this);
    private boolean closed;

    Held(Plan plan, int batch, long[] values) {
      this.plan = plan;
      this.batch = batch;
      this.values = values;
      open.incrementAndGet();
    }

    @Override
    public synchronized void close() {
      if (closed) {
        throw new IllegalStateException("closed twice");
      }
      closed = true;
      BatchTracker.closed(tracked);
      open.decrementAndGet();
    }
  }

  /** A filled batch, or a part of one: gives its staging buffer back when closed. */
  final class Filled extends Held implements PackedBatch {
    private final Runnable release;

    Filled(Plan plan, int batch, long[] values, Runnable release) {
      super(plan, batch, values);
      this.release = release;
    }

    /** Cut in two; each part holds a reference to this batch, which the caller still closes. */
    List<Filled> halves() {
      if (values.length < 2) {
        return List.of();
      }
      int half = values.length / 2;
      List<Filled> parts = new ArrayList<>();
      for (long[] v : split(values, half)) {
        Filled whole = retain();
        parts.add(new Filled(plan, batch, v, whole::close));
      }
      return parts;
    }

    @Override
    public int rows() {
      return values.length;
    }

    @Override
    public long copyBytes() {
      return 8L * values.length;
    }

    @Override
    public long deviceBytes() {
      return 8L + values.length;
    }

    private int refs = 1;

    synchronized Filled retain() {
      refs++;
      return this;
    }

    @Override
    public void close() {
      synchronized (this) {
        if (--refs > 0) {
          return;
        }
      }
      super.close();
      release.run();
    }
  }

  static long[][] split(long[] v, int at) {
    return new long[][] {
      java.util.Arrays.copyOfRange(v, 0, at), java.util.Arrays.copyOfRange(v, at, v.length)
    };
  }

  /** A batch's rows back on the host. */
  final class Rows extends Held implements ResultBatch<Long> {
    Rows(Plan plan, int batch, long[] values) {
      super(plan, batch, values);
    }

    @Override
    public Iterator<Long> rows() {
      return LongStream.of(values).iterator();
    }
  }

  /** A task's input, per its plan. */
  final class Source implements BatchSource<Buf, Filled> {
    private final Plan plan;
    private int filled;

    Source(Plan plan) {
      this.plan = plan;
    }

    @Override
    public Filled fill(Buf staging, Runnable release) {
      if (plan.faultAt(PipelineStage.PACK, filled)) {
        release.run();
        throw new IllegalArgumentException("task " + plan.id() + ": bad input in batch " + filled);
      }
      int rows = filled < plan.batches() ? plan.rowsPerBatch() : 0;
      long first = (long) filled * plan.rowsPerBatch();
      long[] v = LongStream.range(first, first + rows).map(plan::row).toArray();
      Filled f = new Filled(plan, filled, v, release);
      filled = Math.min(filled + 1, plan.batches());
      return f;
    }

    @Override
    public boolean more() {
      return filled < plan.batches();
    }

    @Override
    public long rowsRead() {
      return (long) filled * plan.rowsPerBatch();
    }
  }

  /** An injected device allocation failure, as cuDF reports one. */
  static OutOfMemoryError injectedOom(Plan p, PipelineStage s) {
    return new OutOfMemoryError(
        "Could not allocate native memory: injected in " + s + " of task " + p.id());
  }

  /**
   * The stages of one task: values carried through, the kernel applied in compute; an allocation
   * failure is recognized as cuDF reports one, and both batches split in halves.
   */
  class Stages implements BatchStages<Filled, Held, Held, Rows> {
    private final Plan plan;
    private final AtomicBoolean failedOnce = new AtomicBoolean();

    Stages(Plan plan) {
      this.plan = plan;
    }

    private void inject(PipelineStage s, Held in) throws InterruptedException {
      if (plan.faultAt(s, in.batch)) {
        switch (plan.fate()) {
          case OOM_ONCE -> {
            if (failedOnce.compareAndSet(false, true)) {
              throw injectedOom(plan, s);
            }
          }
          case OOM_SPLIT -> {
            if (in.values.length > Math.max(1, plan.rowsPerBatch() / 3)) {
              throw injectedOom(plan, s);
            }
          }
          case OOM_NEVER -> throw injectedOom(plan, s);
          default ->
              throw new IllegalStateException("task " + plan.id() + ": injected failure in " + s);
        }
      }
      if (plan.fate() == Fate.KILLED && s == PipelineStage.COMPUTE && in.batch == 1) {
        // A slow kernel, as CUDA runs one: the interrupt does not end it.
        sleepThroughInterrupts(200);
      } else if ((in.values.length + in.batch) % 17 == 0) {
        Thread.sleep(1);
      }
    }

    @Override
    public Held upload(Filled in) throws InterruptedException {
      inject(PipelineStage.UPLOAD, in);
      return new Held(plan, in.batch, in.values.clone());
    }

    @Override
    public Held compute(Held in) throws InterruptedException {
      inject(PipelineStage.COMPUTE, in);
      return new Held(plan, in.batch, LongStream.of(in.values).map(Plan::out).toArray());
    }

    @Override
    public Rows download(Held in) throws InterruptedException {
      inject(PipelineStage.DOWNLOAD, in);
      return new Rows(plan, in.batch, in.values.clone());
    }

    @Override
    public String outOfMemory(PipelineStage stage, Throwable t) {
      return t instanceof OutOfMemoryError && t.getMessage().startsWith("Could not allocate")
          ? "kernel soak asked for " + t.getMessage().length() + " bytes in " + stage.label()
          : null;
    }

    @Override
    public List<Filled> splitHost(Filled host) {
      return host.halves();
    }

    @Override
    public List<Held> splitDevice(Held device) {
      if (device.values.length < 2) {
        return List.of();
      }
      List<Held> parts = new ArrayList<>();
      for (long[] v : split(device.values, device.values.length / 2)) {
        parts.add(new Held(plan, device.batch, v));
      }
      return parts;
    }

    @Override
    public long outputBytes(Held output) {
      return output.values.length;
    }
  }

  static void sleepThroughInterrupts(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    boolean interrupted = false;
    while (System.nanoTime() < end) {
      try {
        TimeUnit.NANOSECONDS.sleep(end - System.nanoTime());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- the run ----------------------------------------------------------------------------------

  /** The task was killed and stopped reading, as Spark's InterruptibleIterator does. */
  static final class TaskKilled extends RuntimeException {
    TaskKilled() {
      super("task killed");
    }
  }

  /**
   * How a task ended.
   *
   * @param rows the rows it read
   * @param failure what ended it early; null when it read every row
   * @param killToEndNanos from the kill to the task thread's return; -1 when not killed
   */
  record Outcome(Plan plan, List<Long> rows, Throwable failure, long killToEndNanos) {}

  private Outcome run(
      StagePipeline pipeline, BoundedPool<Buf> pool, Plan plan, ScheduledExecutorService killer) {
    Thread.interrupted(); // a pool thread may carry the interrupt of the task before
    AtomicBoolean killed = new AtomicBoolean();
    AtomicLong killedAt = new AtomicLong();
    Thread me = Thread.currentThread();
    AtomicBoolean running = new AtomicBoolean(true);
    Future<?> kill = null;
    if (plan.fate() == Fate.KILLED) {
      kill =
          killer.schedule(
              () -> {
                synchronized (running) {
                  if (!running.get()) {
                    return;
                  }
                  killedAt.set(System.nanoTime());
                  killed.set(true);
                  if (plan.interrupt()) {
                    me.interrupt();
                  }
                }
              },
              plan.killAfterMillis(),
              TimeUnit.MILLISECONDS);
    }
    TaskDriver<Buf, Filled, Rows, Long> driver =
        new TaskDriver<>(
            pipeline,
            pool,
            new Stages(plan),
            new Source(plan),
            new TaskTag(plan.id(), plan.id(), "task " + plan.id()),
            2,
            null,
            killed::get);
    List<Long> rows = new ArrayList<>();
    Throwable failure = null;
    long end;
    try {
      while (true) {
        if (killed.get()) {
          throw new TaskKilled();
        }
        if (!driver.hasNext()) {
          break;
        }
        rows.add(driver.next());
      }
    } catch (Throwable t) {
      failure = t;
    } finally {
      end = System.nanoTime();
      synchronized (running) {
        running.set(false);
      }
      if (kill != null) {
        kill.cancel(false);
      }
      driver.finish(); // the task-completion listener, on the task's thread as Spark runs it
      Thread.interrupted();
    }
    long k = killedAt.get();
    return new Outcome(plan, rows, failure, k == 0 ? -1 : end - k);
  }

  @Test
  void aThousandTasksWithFaultsLeaveEveryOtherResultExactAndNothingHeld() throws Exception {
    List<String> held = Collections.synchronizedList(new ArrayList<>());
    BatchTracker.start(held::add);
    StagePipeline pipeline = new StagePipeline(new DeviceBudget(BUDGET), "soak", null);
    List<Buf> buffers = new ArrayList<>();
    for (int i = 0; i < BUFFERS; i++) {
      buffers.add(new Buf());
    }
    BoundedPool<Buf> pool = new BoundedPool<>(buffers);
    ExecutorService taskThreads = Executors.newFixedThreadPool(THREADS);
    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    long start = System.nanoTime();
    try {
      List<Plan> plans = plans(new Random(SEED));
      List<Future<Outcome>> futures = new ArrayList<>();
      for (Plan p : plans) {
        futures.add(taskThreads.submit(() -> run(pipeline, pool, p, killer)));
      }
      List<Outcome> outcomes = new ArrayList<>();
      for (Future<Outcome> f : futures) {
        outcomes.add(f.get(120, TimeUnit.SECONDS));
      }
      int[] ended = new int[Fate.values().length];
      long slowestKill = 0;
      for (Outcome o : outcomes) {
        check(o);
        ended[o.plan().fate().ordinal()]++;
        slowestKill = Math.max(slowestKill, o.killToEndNanos());
      }
      for (Fate f : Fate.values()) {
        assertTrue(
            ended[f.ordinal()] >= 5, "too few " + f + ": " + java.util.Arrays.toString(ended));
      }
      assertTrue(pipeline.metrics().outOfMemoryRetries() > 0, "no stage ran again");
      assertTrue(pipeline.metrics().outOfMemorySplits() > 0, "no batch was split");
      assertTrue(
          slowestKill < KILL_BOUND_NANOS,
          "a killed task returned "
              + TimeUnit.NANOSECONDS.toMillis(slowestKill)
              + " ms after the kill");
      assertNothingHeld(pipeline, pool);
      assertEquals(List.of(), held, "batches still held at their task's end");
      System.out.printf(
          "soak: %d tasks (%s) in %d ms; slowest killed task returned %d ms after its kill%n",
          TASKS,
          java.util.Arrays.toString(ended),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
          TimeUnit.NANOSECONDS.toMillis(slowestKill));
    } finally {
      taskThreads.shutdownNow();
      killer.shutdownNow();
      pipeline.close();
      pool.close();
      BatchTracker.stop();
    }
  }

  /** The task's rows are exact, or it failed as its fault says, having read a prefix. */
  private static void check(Outcome o) {
    Plan p = o.plan();
    List<Long> expected = p.expected();
    String who = "task " + p.id() + " " + p;
    if (o.failure() == null) {
      assertTrue(p.fate().readsEveryRow() || p.fate() == Fate.KILLED, who + " did not fail");
      assertEquals(expected, o.rows(), who);
      return;
    }
    assertEquals(expected.subList(0, o.rows().size()), o.rows(), who + ": rows before the failure");
    Throwable f = o.failure();
    // As Spark's executor looks (spark.executor.killOnFatalError.depth = 5): a fatal error in a
    // failed task's cause chain would end the executor and every task on it.
    Throwable c = f;
    for (int depth = 0; depth < 5 && c != null; depth++, c = c.getCause()) {
      assertTrue(!(c instanceof VirtualMachineError), who + ": the executor would exit on " + f);
    }
    switch (p.fate()) {
      case NORMAL, OOM_ONCE, OOM_SPLIT -> throw new AssertionError(who + " failed", f);
      case KILLED ->
          assertTrue(
              f instanceof TaskKilled
                  || (f instanceof IllegalStateException
                      && f.getCause() instanceof InterruptedException),
              who + ": " + f);
      case FAILS -> {
        if (p.stage() == PipelineStage.PACK) {
          assertTrue(f instanceof IllegalArgumentException, who + ": " + f);
        } else {
          assertTrue(f instanceof PipelineTaskException, who + ": " + f);
          assertTrue(f.getCause() instanceof IllegalStateException, who + ": " + f);
          assertTrue(f.getMessage().contains(p.stage().label()), who + ": " + f);
        }
      }
      case OOM_NEVER -> {
        assertTrue(f instanceof PipelineTaskException, who + ": " + f);
        assertTrue(f.getCause() instanceof OutOfDeviceMemoryException, who + ": " + f);
        assertTrue(f.getCause().getSuppressed()[0] instanceof OutOfMemoryError, who + ": " + f);
        assertTrue(f.getMessage().contains("which cannot be split further"), who + ": " + f);
      }
    }
  }

  /** The pipeline drops a killed task's batches as its threads reach them: wait, then check. */
  private void assertNothingHeld(StagePipeline pipeline, BoundedPool<Buf> pool)
      throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((pipeline.budget().inFlight() > 0 || open.get() > 0 || pool.available() < BUFFERS)
        && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    assertEquals(0, pipeline.budget().inFlight(), "device bytes in flight");
    assertEquals(0, pipeline.budget().waiting(), "budget requests waiting");
    assertEquals(BUFFERS, pool.available(), "staging buffers not given back");
    assertEquals(0, open.get(), "values not closed");
  }
}
