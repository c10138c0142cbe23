package dev.overlap.executor.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.api.CpuInstead;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

/** A task's order-sensitive sums: charged batch by batch, each sum against its own bound. */
class RunningSumsTest {
  private static final BigInteger BOUND = BigInteger.valueOf(100);

  @Test
  void aSumPassingItsBoundOverSeveralBatchesGoesToTheCpuFromTheStart() {
    RunningSums sums = new RunningSums();
    sums.charge(0, BigInteger.valueOf(60), BOUND, "x could pass decimal(38, 0)");
    // Another sum's charges are its own.
    sums.charge(1, BigInteger.valueOf(90), BOUND, "y could pass decimal(38, 0)");
    CpuInstead e =
        assertThrows(
            CpuInstead.class,
            () -> sums.charge(0, BigInteger.valueOf(40), BOUND, "x could pass decimal(38, 0)"));
    assertTrue(e.fromStartOnly());
    assertEquals(
        "the running sum of x could pass decimal(38, 0) in some order of adding", e.getMessage());
  }
}
