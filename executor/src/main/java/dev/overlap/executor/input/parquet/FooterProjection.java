package dev.overlap.executor.input.parquet;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.parquet.format.ColumnOrder;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Util;

/**
 * A file's footer cut down to some of its top-level columns: their schema subtrees, and in every
 * row group their column chunks (one per leaf), as the file has them. The chunks' offsets into the
 * file are unchanged, so a reader built from it reads the same bytes of the same file.
 *
 * <p>Why: cuDF's hybrid reader decodes nested columns only when no column is selected, reading
 * every column its footer names. A file with nested columns is read through a footer naming only
 * the columns the kernel reads.
 */
final class FooterProjection {
  private FooterProjection() {}

  /** {@code footer}'s thrift bytes naming only the top-level columns {@code keep}. */
  static byte[] project(byte[] footer, Set<String> keep) {
    try {
      FileMetaData meta = Util.readFileMetaData(new ByteArrayInputStream(footer));
      List<SchemaElement> schema = meta.getSchema();
      SchemaElement root = schema.get(0);
      List<SchemaElement> kept = new ArrayList<>();
      kept.add(root);
      List<int[]> leafRanges = new ArrayList<>(); // [first leaf, leaf count] of each kept column
      int at = 1;
      int leaf = 0;
      int children = 0;
      for (int c = 0; c < root.getNum_children(); c++) {
        int end = subtreeEnd(schema, at);
        int leaves = leaves(schema, at, end);
        if (keep.contains(schema.get(at).getName())) {
          kept.addAll(schema.subList(at, end));
          leafRanges.add(new int[] {leaf, leaves});
          children++;
        }
        leaf += leaves;
        at = end;
      }
      SchemaElement newRoot = root.deepCopy();
      newRoot.setNum_children(children);
      kept.set(0, newRoot);
      meta.setSchema(kept);
      for (RowGroup g : meta.getRow_groups()) {
        g.setColumns(pick(g.getColumns(), leafRanges));
        g.unsetSorting_columns();
      }
      if (meta.isSetKey_value_metadata()) {
        // Arrow's schema names every column: cuDF's reader would log it does not match.
        meta.getKey_value_metadata().removeIf(kv -> "ARROW:schema".equals(kv.getKey()));
      }
      if (meta.isSetColumn_orders()) {
        List<ColumnOrder> orders = pick(meta.getColumn_orders(), leafRanges);
        meta.setColumn_orders(orders);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream(footer.length);
      Util.writeFileMetaData(meta, out);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("could not cut the Parquet footer to the columns read", e);
    }
  }

  /** The index after the subtree starting at {@code at}. */
  private static int subtreeEnd(List<SchemaElement> schema, int at) {
    SchemaElement e = schema.get(at);
    int next = at + 1;
    int n = e.isSetNum_children() ? e.getNum_children() : 0;
    for (int i = 0; i < n; i++) {
      next = subtreeEnd(schema, next);
    }
    return next;
  }

  /** The leaves (primitives, each with a chunk) in {@code [from, to)}. */
  private static int leaves(List<SchemaElement> schema, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      SchemaElement e = schema.get(i);
      if (e.isSetType()) { // a primitive: one column chunk per row group
        n++;
      }
    }
    return n;
  }

  private static <T> List<T> pick(List<T> perLeaf, List<int[]> ranges) {
    List<T> out = new ArrayList<>();
    for (int[] r : ranges) {
      out.addAll(perLeaf.subList(r[0], r[0] + r[1]));
    }
    return out;
  }
}
