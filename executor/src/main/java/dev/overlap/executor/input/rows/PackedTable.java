package dev.overlap.executor.input.rows;

import dev.overlap.executor.compute.KernelInput;
import java.util.List;

/**
 * The kernel's input from packed rows: the uploaded batch's own table, once its copies are done. A
 * batch whose kernel did not fit is split in halves on the device ({@link DeviceBatch#halves}).
 */
public final class PackedTable implements KernelInput<DeviceBatch> {
  @Override
  public Kept table(DeviceBatch batch) {
    batch.awaitCopied();
    return new Kept(batch.table(), batch.retain());
  }

  @Override
  public List<DeviceBatch> split(DeviceBatch batch) {
    return batch.halves();
  }
}
