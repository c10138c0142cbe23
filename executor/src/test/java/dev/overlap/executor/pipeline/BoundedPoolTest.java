package dev.overlap.executor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BoundedPoolTest {
  /** Where {@link #own} started the last task, to see it wait. */
  private final java.util.concurrent.atomic.AtomicReference<Thread> last =
      new java.util.concurrent.atomic.AtomicReference<>();

  /** Runs a task on a thread of its own, kept in {@link #last}. */
  private void own(Runnable r) {
    Thread t = new Thread(r, "acquire");
    last.set(t);
    t.start();
  }

  /** Until the last task's thread waits (in the pool: it does nothing else that waits). */
  private void awaitWaiting() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (last.get() == null
        || last.get().getState() != Thread.State.TIMED_WAITING
            && last.get().getState() != Thread.State.WAITING) {
      assertTrue(System.nanoTime() < deadline, "the acquire never waited");
      Thread.sleep(1);
    }
  }

  static final class Buf implements AutoCloseable {
    final AtomicInteger closes = new AtomicInteger();

    @Override
    public void close() {
      closes.incrementAndGet();
    }
  }

  @Test
  void acquireWaitsUntilABufferComesBackAndReusesIt() throws Exception {
    Buf only = new Buf();
    BoundedPool<Buf> pool = new BoundedPool<>(List.of(only));
    Buf first = pool.acquire();
    CompletableFuture<Buf> second =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return pool.acquire();
              } catch (InterruptedException e) {
                throw new RuntimeException(e);
              }
            },
            this::own);
    awaitWaiting();
    assertFalse(second.isDone(), "acquire did not wait");
    pool.release(first);
    assertSame(only, second.get(5, TimeUnit.SECONDS));
    pool.release(only);
    pool.close();
    assertEquals(1, only.closes.get());
  }

  @Test
  void aBufferOutAtCloseIsClosedWhenItComesBack() throws Exception {
    Buf a = new Buf();
    Buf b = new Buf();
    BoundedPool<Buf> pool = new BoundedPool<>(List.of(a, b));
    Buf out = pool.acquire();
    pool.close();
    Buf other = out == a ? b : a;
    assertEquals(1, other.closes.get());
    assertEquals(0, out.closes.get());
    pool.release(out);
    assertEquals(1, out.closes.get());
    assertThrows(IllegalStateException.class, pool::acquire);
  }

  @Test
  void releasingTwiceIsRejected() throws Exception {
    Buf a = new Buf();
    BoundedPool<Buf> pool = new BoundedPool<>(List.of(a));
    pool.release(pool.acquire());
    assertThrows(IllegalStateException.class, () -> pool.release(a));
    pool.close();
    assertTrue(a.closes.get() == 1);
  }

  @Test
  void aWaitEndsWhenItsTaskIsCancelled() throws Exception {
    Buf only = new Buf();
    BoundedPool<Buf> pool = new BoundedPool<>(List.of(only));
    Buf out = pool.acquire();
    java.util.concurrent.atomic.AtomicBoolean killed =
        new java.util.concurrent.atomic.AtomicBoolean();
    CompletableFuture<Throwable> waiting =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                pool.acquire(killed::get);
                return null;
              } catch (Throwable t) {
                return t;
              }
            },
            this::own);
    awaitWaiting();
    assertFalse(waiting.isDone(), "acquire did not wait");
    killed.set(true);
    Throwable t = waiting.get(5, TimeUnit.SECONDS);
    assertTrue(t instanceof InterruptedException, "got " + t);
    assertEquals(0, pool.available());
    pool.release(out);
    assertEquals(1, pool.available());
    pool.close();
  }
}
