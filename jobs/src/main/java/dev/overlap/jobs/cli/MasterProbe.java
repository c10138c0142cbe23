package dev.overlap.jobs.cli;

import java.util.Optional;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEnv;

/**
 * Asks an address that accepts connections whether a Spark standalone master answers there, in at
 * most {@value #TIMEOUT_S} s: something else on that port (a web server, a worker) would otherwise
 * hold Spark for a minute of registration retries and end in "Cannot call methods on a stopped
 * SparkContext".
 */
final class MasterProbe {
  static final int TIMEOUT_S = 10;

  private MasterProbe() {}

  /** Empty when a master answers at {@code host:port}, else what went wrong. */
  static Optional<String> ask(SparkConf conf, String host, int port) {
    SparkConf c =
        conf.clone()
            .set("spark.rpc.lookupTimeout", TIMEOUT_S + "s")
            .set("spark.rpc.askTimeout", TIMEOUT_S + "s");
    RpcEnv env;
    try {
      SecurityManager security =
          new SecurityManager(
              c,
              scala.Option.empty(),
              org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE_DRIVER());
      env = RpcEnv.create("overlapMasterCheck", "127.0.0.1", 0, c, security, true);
    } catch (RuntimeException e) {
      return Optional.empty(); // cannot ask: leave it to Spark
    }
    try {
      env.setupEndpointRef(RpcAddress.apply(host, port), "Master");
      return Optional.empty();
    } catch (Exception e) { // Spark's RpcTimeoutException is a checked TimeoutException
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      return Optional.of(JobPaths.firstLine(root));
    } finally {
      env.shutdown();
    }
  }
}
