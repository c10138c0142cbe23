package dev.overlap.executor.input.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.overlap.executor.testing.LocalSession;
import dev.overlap.executor.testing.NestedData;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Util;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * A footer cut down to some top-level columns, over a file Spark wrote with nested columns: the
 * schema keeps their subtrees whole, every row group keeps their chunks, at the same offsets.
 */
class FooterProjectionTest {
  private static byte[] footerOf(Path file) throws Exception {
    byte[] all = Files.readAllBytes(file);
    int len = ByteBuffer.wrap(all, all.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    return Arrays.copyOfRange(all, all.length - 8 - len, all.length - 8);
  }

  private static List<String> chunkPaths(RowGroup g) {
    List<String> out = new ArrayList<>();
    for (ColumnChunk c : g.getColumns()) {
      out.add(String.join(".", c.getMeta_data().getPath_in_schema()));
    }
    return out;
  }

  @Test
  void theKeptColumnsSubtreesAndChunksStayAsTheFileHasThem() throws Exception {
    SparkSession spark = LocalSession.start("local[1]", "footer-projection");
    Path dir = Files.createTempDirectory("overlap-projection").resolve("t");
    try {
      NestedData.frame(spark, 2_000, 1)
          .write()
          .option("parquet.block.size", 16 * 1024)
          .parquet(dir.toString());
    } finally {
      spark.stop();
    }
    Path file;
    try (var files = Files.list(dir)) {
      file = files.filter(p -> p.toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    byte[] footer = footerOf(file);
    FileMetaData before = Util.readFileMetaData(new ByteArrayInputStream(footer));
    FileMetaData after =
        Util.readFileMetaData(
            new ByteArrayInputStream(
                FooterProjection.project(footer, Set.of("id", "rec", "props"))));
    List<String> names = new ArrayList<>();
    for (SchemaElement e : after.getSchema()) {
      names.add(e.getName());
    }
    assertEquals(
        List.of(
            "spark_schema",
            "id",
            "rec",
            "a",
            "b",
            "c",
            "d",
            "list",
            "element",
            "props",
            "key_value",
            "key",
            "value"),
        names);
    assertEquals(3, after.getSchema().get(0).getNum_children());
    assertEquals(before.getRow_groups().size(), after.getRow_groups().size());
    assertEquals(before.getNum_rows(), after.getNum_rows());
    for (int g = 0; g < before.getRow_groups().size(); g++) {
      RowGroup was = before.getRow_groups().get(g);
      RowGroup is = after.getRow_groups().get(g);
      assertEquals(
          List.of(
              "id",
              "rec.a",
              "rec.b.c",
              "rec.b.d.list.element",
              "props.key_value.key",
              "props.key_value.value"),
          chunkPaths(is));
      assertEquals(was.getNum_rows(), is.getNum_rows());
      for (ColumnChunk c : is.getColumns()) {
        ColumnChunk same =
            was.getColumns().stream()
                .filter(
                    w ->
                        w.getMeta_data()
                            .getPath_in_schema()
                            .equals(c.getMeta_data().getPath_in_schema()))
                .findFirst()
                .orElseThrow();
        assertEquals(
            same.getMeta_data().getData_page_offset(), c.getMeta_data().getData_page_offset());
        assertEquals(
            same.getMeta_data().getTotal_compressed_size(),
            c.getMeta_data().getTotal_compressed_size());
      }
    }
    if (before.isSetColumn_orders()) {
      assertEquals(6, after.getColumn_orders().size());
    }
  }
}
