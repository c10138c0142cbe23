package dev.overlap.executor.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class DiagnosticsTest {
  @Test
  void aClassesLoggerIsNamedUnderThePrefix() {
    assertEquals(
        "dev.overlap.diagnostics.DiagnosticsTest",
        Diagnostics.logger(DiagnosticsTest.class).getName());
  }

  /** The log configuration users run with sends these loggers to the log file and nowhere else. */
  @Test
  void theShippedLogConfigurationSendsThePrefixToTheFileOnly() throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(Path.of("..", "conf", "log4j2.properties"))) {
      p.load(r);
    }
    String logger = null;
    for (String k : p.stringPropertyNames()) {
      if (k.startsWith("logger.") && k.endsWith(".name")) {
        String name = p.getProperty(k).trim();
        if ((name + ".").equals(Diagnostics.PREFIX)) {
          logger = k.substring(0, k.length() - ".name".length());
        }
      }
    }
    assertTrue(
        logger != null, "no logger named " + Diagnostics.PREFIX + " in conf/log4j2.properties");
    assertEquals("false", p.getProperty(logger + ".additivity").trim());
    assertEquals(
        "info", p.getProperty(logger + ".level").trim().toLowerCase(java.util.Locale.ROOT));
    assertEquals("file", p.getProperty(logger + ".appenderRef.file.ref").trim());
    for (String k : p.stringPropertyNames()) {
      if (k.startsWith(logger + ".appenderRef.") && k.endsWith(".ref")) {
        assertEquals("file", p.getProperty(k).trim(), k);
      } else if (k.startsWith(logger + ".appenderRef.")) {
        assertTrue(false, "no other setting of the appender reference: " + k);
      }
    }
  }
}
