package dev.overlap.executor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API's boundary: what a {@link Public} type shows mentions only public types of this
 * project, and the API package depends on nothing internal.
 */
class ApiBoundaryTest {
  private static final String PROJECT = "dev.overlap.";
  private static final String API = "dev.overlap.executor.api.";

  @Test
  void publicSignaturesMentionOnlyPublicTypesOfTheProject() throws Exception {
    List<Class<?>> all = projectClasses();
    List<Class<?>> marked = all.stream().filter(ApiBoundaryTest::isPublicApi).toList();
    assertTrue(marked.size() >= 8, "found only " + marked);
    List<String> leaks = new ArrayList<>();
    for (Class<?> c : marked) {
      leaks.addAll(leaksOf(c));
    }
    assertEquals(List.of(), leaks);
  }

  /** The public top-level types of the API package that are not marked, each for a reason. */
  private static final List<String> UNMARKED =
      List.of(
          // The ServiceLoader seam to the implementation: public so that plan/ can implement it.
          API + "Engine",
          // The mark itself.
          API + "Public");

  @Test
  void everyPublicTypeOfTheApiPackageIsMarkedButTheEngineSeam() throws Exception {
    List<String> unmarked =
        projectClasses().stream()
            .filter(c -> c.getName().startsWith(API) && c.getEnclosingClass() == null)
            .filter(
                c -> Modifier.isPublic(c.getModifiers()) && !c.isAnnotationPresent(Public.class))
            .map(Class::getName)
            .sorted()
            .toList();
    assertEquals(UNMARKED, unmarked);
  }

  @Test
  void theCheckCatchesALeak() {
    assertEquals(1, leaksOf(Leaky.class).size(), leaksOf(Leaky.class).toString());
  }

  @Test
  void theApiPackageReferencesNoInternalPackage() throws IOException {
    Path api = Paths.get("src/main/java/dev/overlap/executor/api");
    assertTrue(Files.isDirectory(api), api.toAbsolutePath().toString());
    Pattern ref = Pattern.compile("dev\\.overlap\\.(?!executor\\.api\\b)[a-z][\\w.]*");
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.list(api)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        Matcher m = ref.matcher(Files.readString(f));
        while (m.find()) {
          found.add(f.getFileName() + ": " + m.group());
        }
      }
    }
    assertEquals(List.of(), found);
  }

  /**
   * Which packages each package may use: the arrows drawn in docs/architecture.md. A package is
   * named by its path under {@code dev.overlap.executor} ("input.rows"); the root's one file is
   * "(root)". Inputs and outputs never use each other; nothing below uses what is above it.
   */
  private static final Map<String, Set<String>> ARROWS =
      Map.ofEntries(
          Map.entry("api", Set.of()),
          Map.entry("resource", Set.of()),
          Map.entry("types", Set.of()),
          Map.entry("config", Set.of("api")),
          Map.entry("pipeline", Set.of("api", "resource")),
          Map.entry("trace", Set.of("api", "pipeline", "resource")),
          Map.entry("gpu", Set.of("api", "config", "pipeline", "resource", "trace")),
          Map.entry("compute", Set.of("api", "gpu", "pipeline", "resource", "types")),
          Map.entry("input.rows", Set.of("compute", "gpu", "pipeline", "resource", "types")),
          Map.entry("input.parquet.delta", Set.of()),
          Map.entry(
              "input.parquet",
              Set.of(
                  "api",
                  "compute",
                  "gpu",
                  "input.parquet.delta",
                  "pipeline",
                  "resource",
                  "trace",
                  "types")),
          Map.entry("input.rapids", Set.of("compute", "gpu", "pipeline", "resource", "types")),
          Map.entry(
              "output.rows", Set.of("compute", "gpu", "output", "pipeline", "resource", "types")),
          Map.entry("output", Set.of("compute", "gpu", "pipeline")),
          Map.entry(
              "output.parquet",
              Set.of("api", "compute", "gpu", "output", "pipeline", "resource", "types")),
          Map.entry("plugin", Set.of("api", "config", "gpu", "pipeline", "resource", "trace")),
          Map.entry(
              "task",
              Set.of(
                  "api",
                  "compute",
                  "config",
                  "gpu",
                  "input.parquet",
                  "input.rapids",
                  "input.rows",
                  "output",
                  "output.parquet",
                  "output.rows",
                  "pipeline",
                  "plugin",
                  "resource",
                  "trace",
                  "types")),
          Map.entry(
              "plan",
              Set.of(
                  "api",
                  "config",
                  "input.parquet",
                  "input.parquet.delta",
                  "input.rapids",
                  "output.parquet",
                  "pipeline",
                  "plugin",
                  "task",
                  "trace",
                  "types")),
          Map.entry(
              "sql",
              Set.of(
                  "api", "config", "input.parquet.delta", "plan", "plugin", "resource", "types")),
          Map.entry("(root)", Set.of("api", "plugin")));

  @Test
  void packagesUseOnlyThePackagesTheirArrowsAllow() throws IOException {
    Path main = Paths.get("src/main/java/dev/overlap/executor");
    // A package and a class or a wildcard after it; a class right after executor. is the root's.
    Pattern ref =
        Pattern.compile("dev\\.overlap\\.executor\\.(?:([a-z][a-z0-9_.]*?)\\.(?:[A-Z]|\\*)|[A-Z])");
    List<String> found = new ArrayList<>();
    List<Path> sources;
    try (Stream<Path> files = Files.walk(main)) {
      sources = files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
    for (Path f : sources) {
      Path dir = main.relativize(f.getParent());
      String pkg = dir.getNameCount() == 0 || dir.toString().isEmpty() ? "(root)" : dotted(dir);
      Set<String> allowed = ARROWS.get(pkg);
      if (allowed == null) {
        found.add(pkg + ": a package with no arrows drawn");
        continue;
      }
      // A string naming a class (a message, a setting's value) is no arrow.
      String code = Files.readString(f).replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"");
      Matcher m = ref.matcher(code);
      while (m.find()) {
        String used = m.group(1) == null ? "(root)" : m.group(1);
        if (!used.equals(pkg) && !allowed.contains(used)) {
          found.add(pkg + "/" + f.getFileName() + " uses " + used);
        }
      }
    }
    assertEquals(List.of(), found.stream().distinct().toList());
  }

  private static String dotted(Path dir) {
    List<String> parts = new ArrayList<>();
    dir.forEach(p -> parts.add(p.toString()));
    return String.join(".", parts);
  }

  /** The arrows themselves run one way: no package reaches itself through others. */
  @Test
  void theArrowsHaveNoCircle() {
    for (String start : ARROWS.keySet()) {
      Set<String> seen = new TreeSet<>();
      List<String> todo = new ArrayList<>(ARROWS.get(start));
      while (!todo.isEmpty()) {
        String next = todo.remove(todo.size() - 1);
        assertTrue(!next.equals(start), start + " reaches itself");
        assertTrue(ARROWS.containsKey(next), start + " uses " + next + ", which has no arrows");
        if (seen.add(next)) {
          todo.addAll(ARROWS.get(next));
        }
      }
    }
  }

  /**
   * Each input path and output mode stands alone: none uses another; a path's own sub-folder (the
   * Parquet path's Delta Lake deletion vectors) is part of it.
   */
  @Test
  void inputsAndOutputsNeverUseEachOther() {
    for (Map.Entry<String, Set<String>> e : ARROWS.entrySet()) {
      String side = e.getKey().split("\\.")[0];
      if (side.equals("input") || side.equals("output")) {
        for (String used : e.getValue()) {
          String other = used.split("\\.")[0];
          assertTrue(
              !(other.equals("input") || other.equals("output"))
                  || (side.equals("output") && used.equals("output"))
                  || used.startsWith(e.getKey() + "."),
              e.getKey() + " uses " + used);
        }
      }
    }
  }

  /** A public type whose method shows an internal one, to prove the check sees it. */
  @Public
  public static final class Leaky {
    public ApiBoundaryTest internal() {
      return null;
    }
  }

  /** Marked, or nested in a marked type. */
  private static boolean isPublicApi(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (k.isAnnotationPresent(Public.class)) {
        return Modifier.isPublic(c.getModifiers());
      }
    }
    return false;
  }

  private static List<String> leaksOf(Class<?> c) {
    List<String> leaks = new ArrayList<>();
    check(c.getName() + " extends", c.getGenericSuperclass(), leaks);
    for (Type t : c.getGenericInterfaces()) {
      check(c.getName() + " implements", t, leaks);
    }
    for (Method m : c.getDeclaredMethods()) {
      if (shown(m.getModifiers()) && !m.isSynthetic()) {
        check(c.getName() + "." + m.getName(), m.getGenericReturnType(), leaks);
        checkExecutable(c.getName() + "." + m.getName(), m, leaks);
      }
    }
    for (Constructor<?> k : c.getDeclaredConstructors()) {
      if (shown(k.getModifiers()) && !k.isSynthetic()) {
        checkExecutable(c.getName() + ".<init>", k, leaks);
      }
    }
    for (Field f : c.getDeclaredFields()) {
      if (shown(f.getModifiers()) && !f.isSynthetic()) {
        check(c.getName() + "." + f.getName(), f.getGenericType(), leaks);
      }
    }
    return leaks;
  }

  private static boolean shown(int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  private static void checkExecutable(String where, Executable e, List<String> leaks) {
    for (Type t : e.getGenericParameterTypes()) {
      check(where + " parameter", t, leaks);
    }
    for (Type t : e.getGenericExceptionTypes()) {
      check(where + " throws", t, leaks);
    }
  }

  private static void check(String where, Type t, List<String> leaks) {
    if (t == null) {
      return;
    }
    if (t instanceof Class<?> k) {
      while (k.isArray()) {
        k = k.getComponentType();
      }
      if (k.getName().startsWith(PROJECT) && !isPublicApi(k)) {
        leaks.add(where + " shows " + k.getName());
      }
    } else if (t instanceof ParameterizedType p) {
      check(where, p.getRawType(), leaks);
      for (Type a : p.getActualTypeArguments()) {
        check(where, a, leaks);
      }
    } else if (t instanceof GenericArrayType g) {
      check(where, g.getGenericComponentType(), leaks);
    } else if (t instanceof WildcardType w) {
      for (Type b : w.getUpperBounds()) {
        check(where, b, leaks);
      }
      for (Type b : w.getLowerBounds()) {
        check(where, b, leaks);
      }
    } else if (t instanceof TypeVariable<?> v) {
      for (Type b : v.getBounds()) {
        check(where, b, leaks);
      }
    }
  }

  /** Every main class of the executor module, read from the folder that holds {@link Public}. */
  private static List<Class<?>> projectClasses() throws URISyntaxException, IOException {
    Path root = Paths.get(Public.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    TreeSet<String> names = new TreeSet<>();
    try (Stream<Path> files = Files.walk(root)) {
      files
          .filter(p -> p.toString().endsWith(".class"))
          .map(p -> root.relativize(p).toString().replace('/', '.').replace('\\', '.'))
          .map(n -> n.substring(0, n.length() - ".class".length()))
          .filter(n -> n.startsWith(PROJECT))
          .forEach(names::add);
    }
    List<Class<?>> classes = new ArrayList<>();
    for (String n : names) {
      try {
        classes.add(Class.forName(n, false, ApiBoundaryTest.class.getClassLoader()));
      } catch (ClassNotFoundException | LinkageError e) {
        throw new AssertionError("cannot load " + n, e);
      }
    }
    assertTrue(classes.stream().anyMatch(c -> c.getName().startsWith(API)));
    return classes;
  }
}
