package dev.overlap.executor.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

class IteratorsTest {
  @Test
  void mapAppliesTheFunctionAsEachElementIsTaken() {
    List<Integer> applied = new ArrayList<>();
    Iterator<String> it =
        Iterators.map(
            List.of(1, 2, 3).iterator(),
            i -> {
              applied.add(i);
              return "#" + i;
            });
    assertEquals(List.of(), applied);
    assertEquals("#1", it.next());
    assertEquals(List.of(1), applied);
    List<String> rest = new ArrayList<>();
    it.forEachRemaining(rest::add);
    assertEquals(List.of("#2", "#3"), rest);
    assertThrows(NoSuchElementException.class, it::next);
  }

  @Test
  void flatMapSkipsEmptyIteratorsAndTakesTheNextElementOnlyWhenNeeded() {
    List<Integer> taken = new ArrayList<>();
    Iterator<Integer> it =
        Iterators.flatMap(
            List.of(0, 2, 0, 1, 0).iterator(),
            n -> {
              taken.add(n);
              List<Integer> out = new ArrayList<>();
              for (int i = 0; i < n; i++) {
                out.add(10 * n + i);
              }
              return out.iterator();
            });
    assertEquals(20, it.next());
    assertEquals(List.of(0, 2), taken);
    assertEquals(21, it.next());
    assertEquals(10, it.next());
    assertFalse(it.hasNext());
    assertEquals(List.of(0, 2, 0, 1, 0), taken);
    assertThrows(NoSuchElementException.class, it::next);
  }

  @Test
  void dropSkipsTheFirstElementsAndRefusesAnInputShorterThanThat() {
    assertEquals(List.of(3, 4), all(Iterators.drop(List.of(1, 2, 3, 4).iterator(), 2)));
    assertEquals(List.of(), all(Iterators.drop(List.of(1, 2).iterator(), 2)));
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class, () -> Iterators.drop(List.of(1).iterator(), 3).hasNext());
    assertEquals("the input ended 2 rows before the 3 rows to go on from", e.getMessage());
  }

  private static List<Integer> all(Iterator<Integer> it) {
    List<Integer> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }
}
