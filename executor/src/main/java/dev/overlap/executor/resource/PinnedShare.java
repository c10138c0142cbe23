package dev.overlap.executor.resource;

import ai.rapids.cudf.DefaultHostMemoryAllocator;
import ai.rapids.cudf.HostMemoryAllocator;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.PinnedMemoryPool;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The part of cuDF's pinned pool that this executor's buffers other than the staging buffers may
 * hold at once: results copied back, encoded Parquet, row groups larger than a staging buffer. A
 * buffer that would not fit in what is left is not asked of the pool at all: the caller takes
 * pageable memory at once, where the pool would have refused it with an error line from RMM on the
 * terminal (one per refusal, with several download threads many).
 *
 * <p>Unlimited until {@link #limit} is called: where another plugin made the pool (the RAPIDS
 * Accelerator), what it holds is not known here, and every buffer asks the pool.
 *
 * <p>Ownership: a buffer from {@link #tryPinned} is the caller's, to close as any other; its bytes
 * come back to the share when its last reference is closed.
 */
public final class PinnedShare {
  private static final Share SHARE = new Share();

  /**
   * cuDF's default host allocations (host column builders, copies to the host, any {@code
   * HostMemoryBuffer.allocate}) through the share while it is limited: pinned when it has room,
   * else pageable at once. Without it they ask the pool itself, uncounted, and a pool holding the
   * share's buffers refuses them with an error line from RMM (seen in healthy GPU suite runs).
   */
  private static final HostMemoryAllocator THROUGH_SHARE =
      new HostMemoryAllocator() {
        @Override
        public HostMemoryBuffer allocate(long bytes, boolean preferPinned) {
          HostMemoryBuffer b = preferPinned ? tryPinned(bytes) : null;
          return b != null ? b : HostMemoryBuffer.allocateRaw(bytes);
        }

        @Override
        public HostMemoryBuffer allocate(long bytes) {
          return allocate(bytes, true);
        }
      };

  /** cuDF's default allocator before {@link #limit} put {@link #THROUGH_SHARE} in its place. */
  private static HostMemoryAllocator before;

  private PinnedShare() {}

  /**
   * Sets the share: at most {@code bytes} held at once from now on (the executor's GPU set-up: the
   * pool it made, less the staging buffers); cuDF's default host allocations go through it.
   */
  public static synchronized void limit(long bytes) {
    SHARE.limit(bytes);
    if (before == null) {
      before = DefaultHostMemoryAllocator.get();
      DefaultHostMemoryAllocator.set(THROUGH_SHARE);
    }
  }

  /**
   * Every buffer asks the pool again, and cuDF's default allocator is the one before {@link #limit}
   * (the executor's GPU shut down).
   */
  public static synchronized void unlimited() {
    SHARE.limit(Long.MAX_VALUE);
    if (before != null) {
      DefaultHostMemoryAllocator.set(before);
      before = null;
    }
  }

  /** Whether cuDF's default host allocations go through the share now. */
  static boolean routesDefaultAllocations() {
    return DefaultHostMemoryAllocator.get() == THROUGH_SHARE;
  }

  /** The most the share may hold; {@link Long#MAX_VALUE} while unlimited. */
  public static long limitBytes() {
    return SHARE.limit();
  }

  /** Bytes held now by buffers from {@link #tryPinned}. */
  public static long held() {
    return SHARE.held();
  }

  /**
   * A pinned buffer of {@code bytes} when the share and the pool have room; null otherwise (the
   * caller takes pageable memory).
   */
  public static HostMemoryBuffer tryPinned(long bytes) {
    return tryPinned(bytes, () -> {});
  }

  /**
   * As {@link #tryPinned(long)}; {@code poolRefused} runs when the share had room and the pool
   * itself refused (it printed an error line), not when the share had none.
   */
  public static HostMemoryBuffer tryPinned(long bytes, Runnable poolRefused) {
    if (!SHARE.reserve(bytes)) {
      return null;
    }
    HostMemoryBuffer b;
    try {
      b = PinnedMemoryPool.tryAllocate(bytes);
    } catch (RuntimeException | Error e) {
      SHARE.release(bytes);
      throw e;
    }
    if (b == null) {
      SHARE.release(bytes);
      poolRefused.run();
      return null;
    }
    // The buffer is new: no handler to chain. Nothing else may replace this one, or the bytes
    // never come back to the share.
    b.setEventHandler(
        refCount -> {
          if (refCount == 0) {
            SHARE.release(bytes);
          }
        });
    return b;
  }

  /** The accounting alone: bytes held against a limit. Thread-safe. */
  static final class Share {
    private final AtomicLong limit = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong held = new AtomicLong();

    void limit(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("negative pinned share: " + bytes);
      }
      limit.set(bytes);
    }

    /** Counts {@code bytes} as held when they fit under the limit; false (nothing held) if not. */
    boolean reserve(long bytes) {
      while (true) {
        long h = held.get();
        long max = limit.get();
        if (bytes > max - h) {
          return false;
        }
        if (held.compareAndSet(h, h + bytes)) {
          return true;
        }
      }
    }

    void release(long bytes) {
      held.addAndGet(-bytes);
    }

    long held() {
      return held.get();
    }

    long limit() {
      return limit.get();
    }
  }
}
