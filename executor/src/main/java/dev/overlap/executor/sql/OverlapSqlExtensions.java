package dev.overlap.executor.sql;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.ColumnarRule;
import org.apache.spark.sql.execution.SparkPlan;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Spark SQL's side of the plugin, named in {@code spark.sql.extensions} by the plugin's driver side
 * ({@code spark.overlap.sql.enabled}): a columnar rule whose step before Spark's columnar
 * transitions hands the parts the SQL compiler takes to Overlap's pipeline ({@link
 * PartialAggregates}).
 */
public final class OverlapSqlExtensions
    extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  @Override
  public BoxedUnit apply(SparkSessionExtensions ext) {
    ext.injectColumnar(
        new AbstractFunction1<org.apache.spark.sql.SparkSession, ColumnarRule>() {
          @Override
          public ColumnarRule apply(org.apache.spark.sql.SparkSession s) {
            return new Rules((SparkSession) s);
          }
        });
    return BoxedUnit.UNIT;
  }

  private static final class Rules extends ColumnarRule {
    private final SparkSession session;

    Rules(SparkSession session) {
      this.session = session;
    }

    @Override
    public Rule<SparkPlan> preColumnarTransitions() {
      return new PartialAggregates(session);
    }
  }
}
