package dev.overlap.executor.device;

import ai.rapids.cudf.HostMemoryAllocator;
import ai.rapids.cudf.HostMemoryBuffer;
import dev.overlap.executor.pack.PinnedShare;

/** Where the download puts a batch's results on the host. */
final class ResultMemory {
  private ResultMemory() {}

  /**
   * One batch's results come back into the pinned pool while it has room (a device-to-host copy
   * into pageable memory runs at a fraction of the speed and holds the download thread), else into
   * pageable memory. After the pool refuses one allocation, the rest of the batch goes to pageable
   * memory without asking again: cuDF's pool logs an error line for every refusal.
   */
  static HostMemoryAllocator pinnedFirst() {
    return new HostMemoryAllocator() {
      private boolean refused;

      @Override
      public HostMemoryBuffer allocate(long bytes, boolean preferPinned) {
        if (!refused) {
          HostMemoryBuffer b = PinnedShare.tryPinned(bytes);
          if (b != null) {
            return b;
          }
          refused = true;
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
  static final HostMemoryAllocator PAGEABLE =
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
