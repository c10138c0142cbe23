package dev.overlap.jobs.tpch;

import io.trino.tpch.LineItem;
import io.trino.tpch.LineItemGenerator;
import io.trino.tpch.Order;
import io.trino.tpch.OrderGenerator;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.StructType;

/**
 * TPC-H {@code lineitem} and {@code orders} as Spark rows of the TPC-H generator's: each column's
 * name, type and value in one place, the tables' schemas made of them, and the rows of one part of
 * a table, counting the orders they belong to ({@link TpchOrderCounter}).
 */
public final class TpchTables {
  private static final DecimalType MONEY = DataTypes.createDecimalType(12, 2);

  /** A column of a table: its name, its type (never null) and its value in a generator's row. */
  private record Column<T>(String name, DataType type, Function<T, Object> value) {}

  // tpch 1.2's date getters already count days since 1970-01-01.
  private static final List<Column<LineItem>> LINEITEM_COLUMNS =
      List.of(
          column("l_orderkey", DataTypes.LongType, LineItem::getOrderKey),
          column("l_partkey", DataTypes.LongType, LineItem::getPartKey),
          column("l_suppkey", DataTypes.LongType, LineItem::getSupplierKey),
          column("l_linenumber", DataTypes.IntegerType, LineItem::getLineNumber),
          column("l_quantity", MONEY, l -> money(l.getQuantity() * 100)),
          column("l_extendedprice", MONEY, l -> money(l.getExtendedPriceInCents())),
          column("l_discount", MONEY, l -> money(l.getDiscountPercent())),
          column("l_tax", MONEY, l -> money(l.getTaxPercent())),
          column("l_returnflag", DataTypes.StringType, LineItem::getReturnFlag),
          column("l_linestatus", DataTypes.StringType, LineItem::getStatus),
          column("l_shipdate", DataTypes.DateType, l -> date(l.getShipDate())),
          column("l_commitdate", DataTypes.DateType, l -> date(l.getCommitDate())),
          column("l_receiptdate", DataTypes.DateType, l -> date(l.getReceiptDate())),
          column("l_shipinstruct", DataTypes.StringType, LineItem::getShipInstructions),
          column("l_shipmode", DataTypes.StringType, LineItem::getShipMode),
          column("l_comment", DataTypes.StringType, LineItem::getComment));

  private static final List<Column<Order>> ORDERS_COLUMNS =
      List.of(
          column("o_orderkey", DataTypes.LongType, Order::getOrderKey),
          column("o_custkey", DataTypes.LongType, Order::getCustomerKey),
          column("o_orderstatus", DataTypes.StringType, o -> String.valueOf(o.getOrderStatus())),
          column("o_totalprice", MONEY, o -> money(o.getTotalPriceInCents())),
          column("o_orderdate", DataTypes.DateType, o -> date(o.getOrderDate())),
          column("o_orderpriority", DataTypes.StringType, Order::getOrderPriority),
          column("o_clerk", DataTypes.StringType, Order::getClerk),
          column("o_shippriority", DataTypes.IntegerType, Order::getShipPriority),
          column("o_comment", DataTypes.StringType, Order::getComment));

  public static final StructType LINEITEM = schema(LINEITEM_COLUMNS);
  public static final StructType ORDERS = schema(ORDERS_COLUMNS);

  private TpchTables() {}

  /** The rows of part {@code part} of {@code parts} of lineitem at scale factor {@code sf}. */
  public static Iterator<Row> lineItems(double sf, int part, int parts, TpchOrderCounter counter) {
    return rows(
        new LineItemGenerator(sf, part, parts), LINEITEM_COLUMNS, LineItem::getOrderKey, counter);
  }

  /** The rows of part {@code part} of {@code parts} of orders at scale factor {@code sf}. */
  static Iterator<Row> orders(double sf, int part, int parts, TpchOrderCounter counter) {
    return rows(new OrderGenerator(sf, part, parts), ORDERS_COLUMNS, Order::getOrderKey, counter);
  }

  private static <T> Column<T> column(String name, DataType type, Function<T, Object> value) {
    return new Column<>(name, type, value);
  }

  private static StructType schema(List<? extends Column<?>> columns) {
    StructType schema = new StructType();
    for (Column<?> c : columns) {
      schema = schema.add(c.name(), c.type(), false);
    }
    return schema;
  }

  private static java.sql.Date date(int daysSinceEpoch) {
    return java.sql.Date.valueOf(LocalDate.ofEpochDay(daysSinceEpoch));
  }

  private static BigDecimal money(long cents) {
    return BigDecimal.valueOf(cents, 2);
  }

  /**
   * Rows of a generator, converted lazily, counting the orders they belong to into {@code counter}
   * (when not null) every thousand orders and at the end.
   */
  private static <T> Iterator<Row> rows(
      Iterable<T> generator,
      List<Column<T>> columns,
      ToLongFunction<T> orderKey,
      TpchOrderCounter counter) {
    Iterator<T> it = generator.iterator();
    return new Iterator<>() {
      private long lastKey = Long.MIN_VALUE;
      private long pending;

      @Override
      public boolean hasNext() {
        boolean more = it.hasNext();
        if (!more && pending > 0 && counter != null) {
          counter.add(pending);
          pending = 0;
        }
        return more;
      }

      @Override
      public Row next() {
        T t = it.next();
        long key = orderKey.applyAsLong(t);
        if (key != lastKey) {
          lastKey = key;
          if (++pending == 1000 && counter != null) {
            counter.add(pending);
            pending = 0;
          }
        }
        Object[] values = new Object[columns.size()];
        for (int i = 0; i < values.length; i++) {
          values[i] = columns.get(i).value().apply(t);
        }
        return RowFactory.create(values);
      }
    };
  }
}
