package dev.overlap.executor.gpu;

import ai.rapids.cudf.Cuda;
import ai.rapids.cudf.HostMemoryBuffer;
import ai.rapids.cudf.PinnedMemoryPool;
import ai.rapids.cudf.Rmm;
import ai.rapids.cudf.RmmAllocationMode;

/**
 * The native steps {@link GpuRuntime#start} takes, in the order it takes them, behind one seam so
 * that a test without a GPU can fail any of them. {@link #CUDF} calls cuDF.
 */
public interface NativeSteps {
  void setDevice(int device);

  boolean rmmInitialized();

  /** Free bytes on the current device. */
  long freeDeviceBytes();

  void initRmm(long poolBytes);

  void shutdownRmm();

  boolean pinnedInitialized();

  void initPinned(long bytes);

  void shutdownPinned();

  /** A buffer from the pinned pool, or null when it has no room. */
  HostMemoryBuffer tryPinned(long bytes);

  HostMemoryBuffer pageable(long bytes);

  StreamPair streams();

  void closeStreams(StreamPair streams);

  /** Starts the Parquet decode warm-up ({@link DecodeWarmup}); the last step. */
  Thread startWarmup(int device);

  NativeSteps CUDF =
      new NativeSteps() {
        @Override
        public void setDevice(int device) {
          Cuda.setDevice(device);
        }

        @Override
        public boolean rmmInitialized() {
          return Rmm.isInitialized();
        }

        @Override
        public long freeDeviceBytes() {
          return Cuda.memGetInfo().free;
        }

        @Override
        public void initRmm(long poolBytes) {
          Rmm.initialize(RmmAllocationMode.POOL, null, poolBytes);
        }

        @Override
        public void shutdownRmm() {
          Rmm.shutdown();
        }

        @Override
        public boolean pinnedInitialized() {
          return PinnedMemoryPool.isInitialized();
        }

        @Override
        public void initPinned(long bytes) {
          // Not cuDF's I/O pool too (the last argument): its Parquet reader and writer would take
          // host buffers from this pool beside the ones PinnedShare counts, and a request that
          // did not fit was refused with an error line from RMM in a healthy run. cuDF's I/O
          // keeps its own pinned pool, which takes a request larger than it from the driver.
          PinnedMemoryPool.initialize(bytes, -1, false);
        }

        @Override
        public void shutdownPinned() {
          PinnedMemoryPool.shutdown();
        }

        @Override
        public HostMemoryBuffer tryPinned(long bytes) {
          return PinnedMemoryPool.tryAllocate(bytes);
        }

        @Override
        public HostMemoryBuffer pageable(long bytes) {
          return HostMemoryBuffer.allocate(bytes, false);
        }

        @Override
        public StreamPair streams() {
          return new StreamPair();
        }

        @Override
        public void closeStreams(StreamPair streams) {
          streams.close();
        }

        @Override
        public Thread startWarmup(int device) {
          return DecodeWarmup.start(device);
        }
      };
}
