package dev.overlap.executor.gpu;

import ai.rapids.cudf.HostMemoryAllocator;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.resource.PinnedShare;

/** Where the download puts a batch's results on the host. */
public final class ResultMemory {
  private ResultMemory() {}

  /**
   * One batch's results come back into the pinned pool while it has room (a device-to-host copy
   * into pageable memory runs at a fraction of the speed and holds the download thread), else into
   * pageable memory. The pool is asked only while {@link PinnedShare} has room; a buffer the share
   * has no room for goes to pageable memory alone, the next one asks again. After the pool itself
   * refuses one allocation, the rest of the batch (or the file, for an encode) goes to pageable
   * memory without asking again: cuDF's pool logs an error line for every refusal.
   */
  public static HostMemoryAllocator pinnedFirst() {
    return new HostMemoryAllocator() {
      private volatile boolean refused;

      @Override
      public HostMemoryBuffer allocate(long bytes, boolean preferPinned) {
        if (!refused) {
          HostMemoryBuffer b = PinnedShare.tryPinned(bytes, () -> refused = true);
          if (b != null) {
            return b;
          }
        }
        return HostMemoryBuffer.allocate(bytes, false);
      }

      @Override
      public HostMemoryBuffer allocate(long bytes) {
        return allocate(bytes, true);
      }
    };
  }

  /** Results come back into pageable memory, leaving the pinned pool alone. */
  public static final HostMemoryAllocator PAGEABLE =
      new HostMemoryAllocator() {
        @Override
        public HostMemoryBuffer allocate(long bytes, boolean preferPinned) {
          return HostMemoryBuffer.allocate(bytes, false);
        }

        @Override
        public HostMemoryBuffer allocate(long bytes) {
          return allocate(bytes, false);
        }
      };
}
