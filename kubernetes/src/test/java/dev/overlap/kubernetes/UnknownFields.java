package dev.overlap.kubernetes;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Fields that a fabric8 model object read from YAML did not know, wherever they are in it: fabric8
 * keeps them aside ({@code additionalProperties}) where a strict API server refuses them ({@code
 * kubectl apply --validate=strict}). A misspelt {@code volumeMount:} is one.
 */
final class UnknownFields {
  private static final String MODEL = "io.fabric8.kubernetes.api.model";

  private UnknownFields() {}

  /** Each unknown field as {@code path.to.field}; empty when every field is known. */
  static List<String> in(Object model) {
    List<String> out = new ArrayList<>();
    walk(model, "", out);
    return out;
  }

  private static void walk(Object o, String path, List<String> out) {
    if (o == null) {
      return;
    }
    if (o instanceof Collection<?> items) {
      int i = 0;
      for (Object item : items) {
        walk(item, path + "[" + i++ + "]", out);
      }
      return;
    }
    if (o instanceof Map<?, ?> map) {
      map.forEach((k, v) -> walk(v, path + "." + k, out));
      return;
    }
    if (!o.getClass().getName().startsWith(MODEL)) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      String name = m.getName();
      if (m.getParameterCount() != 0
          || Modifier.isStatic(m.getModifiers())
          || !m.getDeclaringClass().getName().startsWith(MODEL)
          || !(name.startsWith("get") || name.startsWith("is"))) {
        continue;
      }
      Object value = get(m, o);
      if (name.equals("getAdditionalProperties")) {
        ((Map<?, ?>) value).keySet().forEach(k -> out.add(path + "." + k));
      } else {
        String field = name.substring(name.startsWith("is") ? 2 : 3);
        walk(value, path + "." + Character.toLowerCase(field.charAt(0)) + field.substring(1), out);
      }
    }
  }

  private static Object get(Method m, Object o) {
    try {
      return m.invoke(o);
    } catch (IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException(m + " on " + o.getClass(), e);
    }
  }
}
