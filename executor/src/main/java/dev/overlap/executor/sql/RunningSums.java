package dev.overlap.executor.sql;

import dev.overlap.executor.api.CpuInstead;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.Map;

/**
 * What a task's batches have added to each order-sensitive sum so far, bounded: the largest value
 * of each batch times its rows, summed. One per task (the kernel is deserialized per task and its
 * batches run in order on one compute thread). Past a bound the partition goes to the CPU from its
 * start, where Spark's own evaluation adds in Spark's order.
 */
final class RunningSums {
  private final Map<Integer, BigInteger> used = new HashMap<>();

  /**
   * Adds {@code amount} to sum {@code index}; throws {@link CpuInstead} (from the partition's start
   * only) once the total reaches {@code bound}.
   *
   * @param what the summed expression and its sum's type, for the reason
   */
  void charge(int index, BigInteger amount, BigInteger bound, String what) {
    BigInteger total = used.getOrDefault(index, BigInteger.ZERO).add(amount);
    used.put(index, total);
    if (total.compareTo(bound) >= 0) {
      throw new CpuInstead("the running sum of " + what + " in some order of adding", true);
    }
  }
}
