package dev.overlap.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.GpuKernel;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The examples/ project: README.md's kernel is a copy of its Revenue.java and its call is the one
 * RevenueJob makes; the project's code compiles against this build's API, and the kernel's CPU
 * implementation computes what it says.
 */
class ExampleKernelTest {
  private static final Path SOURCES = Path.of("..", "examples", "src", "main", "java", "example");

  private static String readme() throws Exception {
    return Files.readString(Path.of("..", "README.md"));
  }

  @Test
  void theReadmesKernelIsTheExamplesRevenueJava() throws Exception {
    String kernel = Files.readString(SOURCES.resolve("Revenue.java"));
    assertTrue(
        readme().contains("```java\n" + kernel + "```\n"),
        "README.md's kernel block is not a copy of examples/src/main/java/example/Revenue.java");
  }

  @Test
  void theReadmesCallIsTheOneTheExampleJobMakes() throws Exception {
    Matcher m = Pattern.compile("```java\n(Dataset<Row> partial =[^`]*)```\n").matcher(readme());
    assertTrue(m.find(), "no GpuPartitions.map call in README.md");
    String job = Files.readString(SOURCES.resolve("RevenueJob.java"));
    assertTrue(
        job.replaceAll("\\s+", " ").contains(m.group(1).replaceAll("\\s+", " ").strip()),
        m.group(1));
  }

  @Test
  void theExampleCompilesAndItsCpuKernelSumsPriceTimesDiscount(@TempDir Path out) throws Exception {
    List<String> args = new ArrayList<>();
    // Surefire's class path (a jar whose manifest lists it) holds this build's classes, Spark's
    // and cuDF's.
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    args.addAll(List.of("-d", out.toString(), "-classpath", cp, "--release", "17"));
    args.addAll(List.of("-Xlint:all,-path,-processing", "-Werror"));
    args.add(SOURCES.resolve("Revenue.java").toString());
    args.add(SOURCES.resolve("RevenueJob.java").toString());
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
    assertEquals(0, rc, errors.toString(StandardCharsets.UTF_8));

    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {out.toUri().toURL()}, getClass().getClassLoader())) {
      GpuKernel k =
          (GpuKernel) loader.loadClass("example.Revenue").getDeclaredConstructor().newInstance();
      StructType money =
          new StructType()
              .add("l_extendedprice", DataTypes.createDecimalType(12, 2))
              .add("l_discount", DataTypes.createDecimalType(12, 2));
      assertEquals(
          new StructType().add("revenue", DataTypes.createDecimalType(18, 4)),
          k.outputSchema(money));
      StructType longs = new StructType().add("a", DataTypes.LongType).add("b", DataTypes.LongType);
      assertThrows(IllegalArgumentException.class, () -> k.outputSchema(longs));
      StructType one = new StructType().add("p", DataTypes.createDecimalType(12, 2));
      assertThrows(IllegalArgumentException.class, () -> k.outputSchema(one));

      Iterator<Row> rows =
          k.cpu()
              .apply(
                  List.of(
                          RowFactory.create(new BigDecimal("100.00"), new BigDecimal("0.05")),
                          RowFactory.create(new BigDecimal("20.50"), new BigDecimal("0.10")),
                          RowFactory.create(null, new BigDecimal("0.10")))
                      .iterator());
      Row sum = rows.next();
      assertFalse(rows.hasNext());
      assertEquals(new BigDecimal("7.0500"), sum.getDecimal(0));
      assertTrue(
          k.cpu().apply(List.of(RowFactory.create(null, null)).iterator()).next().isNullAt(0));
      assertFalse(k.cpu().apply(Collections.emptyIterator()).hasNext());
    }
  }
}
