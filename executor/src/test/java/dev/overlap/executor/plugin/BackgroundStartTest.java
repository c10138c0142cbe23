package dev.overlap.executor.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.MetricRegistry;
import dev.overlap.executor.api.GpuStatus;
import dev.overlap.executor.config.GpuKeys;
import dev.overlap.executor.config.OverlapConf;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The executor's GPU start on a thread of its own, and what waits for it. */
class BackgroundStartTest {

  @AfterEach
  void stop() {
    // Ends a start a failed test left waiting, so that nothing after it waits.
    ExecutorState.stopped();
  }

  @Test
  void theGettersWaitForAStartThatBeganAndSeeWhatItFound() throws Exception {
    ExecutorState.starting("7");
    assertEquals("7", ExecutorState.executorId(), "known at once");
    CompletableFuture<GpuStatus> asked = CompletableFuture.supplyAsync(ExecutorState::status);
    CompletableFuture<Optional<OverlapConf>> conf =
        CompletableFuture.supplyAsync(ExecutorState::conf);
    // Neither may answer before the start ends: they would answer NOT_STARTED and no conf.
    Thread.sleep(200);
    assertFalse(asked.isDone(), "status() answered before the start ended");
    assertFalse(conf.isDone(), "conf() answered before the start ended");
    assertEquals(Optional.empty(), ExecutorState.runtimeIfStarted(), "never waits");
    GpuStatus found = new GpuStatus(GpuStatus.State.NO_GPU, Optional.empty(), "none here");
    OverlapConf c = OverlapConf.defaults();
    ExecutorState.started("7", c, found, null, null, null);
    assertSame(found, asked.get(10, TimeUnit.SECONDS));
    assertSame(c, conf.get(10, TimeUnit.SECONDS).orElseThrow());
  }

  @Test
  void anInterruptDoesNotEndTheWaitAndIsKept() throws Exception {
    ExecutorState.starting("7");
    CompletableFuture<Boolean> keptInterrupt = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              GpuStatus s = ExecutorState.status();
              keptInterrupt.complete(s.state() == GpuStatus.State.GPU && Thread.interrupted());
            });
    t.setDaemon(true);
    t.start();
    Thread.sleep(100);
    t.interrupt();
    Thread.sleep(100);
    assertFalse(keptInterrupt.isDone(), "the interrupt ended the wait");
    ExecutorState.started(
        "7",
        OverlapConf.defaults(),
        new GpuStatus(GpuStatus.State.GPU, Optional.of(0), ""),
        null,
        null,
        null);
    assertTrue(keptInterrupt.get(10, TimeUnit.SECONDS));
  }

  @Test
  void initReturnsAndTheStartPublishesWhatItFound() throws Exception {
    OverlapExecutorPlugin plugin = new OverlapExecutorPlugin(code -> {});
    // No GPU assigned, none from the driver: the start probes CUDA on its own thread.
    plugin.init(new Context(new SparkConf()), Map.of());
    GpuStatus s = ExecutorState.status();
    assertEquals(GpuStart.START_THREAD, ExecutorState.startedOn());
    boolean gpu = s.gpu();
    assertEquals(gpu, ExecutorState.runtime().isPresent());
    if (!gpu) {
      assertTrue(
          s.reason().startsWith("no CUDA device is visible")
              || s.reason().startsWith("setting up GPU"),
          s.reason());
    }
    assertEquals("5", ExecutorState.executorId());
    plugin.shutdown();
    assertEquals(GpuStatus.State.NOT_STARTED, ExecutorState.status().state());
  }

  @Test
  void withTheBackgroundStartOffOrRapidsListedAfterItStartsInInit() {
    for (SparkConf c :
        List.of(
            new SparkConf().set(GpuKeys.BACKGROUND_START.key(), "false"),
            new SparkConf()
                .set(
                    "spark.plugins",
                    OverlapDriverPlugin.PLUGIN_CLASS + "," + GpuStart.RAPIDS_PLUGIN))) {
      OverlapExecutorPlugin plugin = new OverlapExecutorPlugin(code -> {});
      plugin.init(new Context(c.set(OverlapConf.ENABLED.key(), "false")), Map.of());
      assertEquals(Thread.currentThread().getName(), ExecutorState.startedOn());
      plugin.shutdown();
    }
  }

  @Test
  void aShutdownDoesNotWaitForAStartThatNeverEndsPastItsLimitNorLeaveWaitersWaiting()
      throws Exception {
    ExecutorState.starting("7");
    CompletableFuture<GpuStatus> asked = CompletableFuture.supplyAsync(ExecutorState::status);
    Thread stopper = new Thread(ExecutorState::stopped);
    stopper.setDaemon(true);
    stopper.start();
    Thread.sleep(100);
    stopper.interrupt(); // as at a JVM's end: it stops waiting
    stopper.join(10_000);
    assertFalse(stopper.isAlive());
    assertEquals(GpuStatus.State.NOT_STARTED, asked.get(10, TimeUnit.SECONDS).state());
  }

  @Test
  void disabledTheStartStillPublishesWithoutTouchingCuda() {
    OverlapExecutorPlugin plugin = new OverlapExecutorPlugin(code -> {});
    plugin.init(new Context(new SparkConf().set(OverlapConf.ENABLED.key(), "false")), Map.of());
    GpuStatus s = ExecutorState.status();
    assertEquals(GpuStatus.State.NO_GPU, s.state());
    assertEquals(OverlapConf.ENABLED.key() + "=false", s.reason());
    plugin.shutdown();
  }

  @Test
  void theStartStaysInInitWhenRapidsIsListedAfterOverlap() {
    String ours = OverlapDriverPlugin.PLUGIN_CLASS;
    String rapids = GpuStart.RAPIDS_PLUGIN;
    assertFalse(GpuStart.rapidsStartsAfter(ours));
    assertFalse(GpuStart.rapidsStartsAfter(rapids + ", " + ours));
    assertTrue(GpuStart.rapidsStartsAfter(ours + "," + rapids));
    // Both in the default list, RAPIDS after ours; or ours in it and RAPIDS in spark.plugins.
    assertTrue(GpuStart.rapidsStartsAfter(ours + "," + rapids + ","));
    assertTrue(GpuStart.rapidsStartsAfter(ours + "," + rapids));
    // Overlap from spark.plugins.defaultList, which Spark starts first.
    assertTrue(GpuStart.rapidsStartsAfter(rapids));
    assertFalse(GpuStart.rapidsStartsAfter(""));
    assertFalse(GpuStart.rapidsStartsAfter("x." + rapids + "," + ours));
  }

  /** Spark's side of an executor plugin's start, as far as init reads it. */
  private record Context(SparkConf conf) implements PluginContext {
    @Override
    public MetricRegistry metricRegistry() {
      return new MetricRegistry();
    }

    @Override
    public String executorID() {
      return "5";
    }

    @Override
    public String hostname() {
      return "localhost";
    }

    @Override
    public Map<String, ResourceInformation> resources() {
      return Map.of();
    }

    @Override
    public void send(Object message) {}

    @Override
    public Object ask(Object message) {
      return null;
    }
  }
}
