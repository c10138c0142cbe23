package dev.overlap.executor.testing;

/**
 * A Parquet footer as cuDF's parser refuses it: a field of the file's metadata repeated with
 * another type before its real value, which ends in {@code expected int32 field, got list field
 * instead}.
 */
public final class MistypedFooter {
  private MistypedFooter() {}

  /**
   * {@code footer} (a {@code FileMetaData} in Thrift's compact protocol) with an empty list as
   * field 1 (its {@code version}, an i32) before the real field 1.
   */
  public static byte[] of(byte[] footer) {
    // Compact protocol: 0x15 is field 1 (id delta 1), type i32.
    if (footer[0] != 0x15) {
      throw new IllegalStateException("footer starts with " + footer[0] + ", not field 1");
    }
    // Field 1 as a list (delta 1, type 9) of no i32s (size 0, element type 5); then the real
    // field 1 with its id written out (type 5, zigzag varint 1 = 2), as its delta is now 0.
    byte[] inserted = {0x19, 0x05, 0x05, 0x02};
    byte[] out = new byte[footer.length + inserted.length - 1];
    System.arraycopy(inserted, 0, out, 0, inserted.length);
    System.arraycopy(footer, 1, out, inserted.length, footer.length - 1);
    return out;
  }
}
