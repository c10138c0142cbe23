package dev.overlap.executor.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the API jobs write against. Only types carrying it are kept stable across releases;
 * everything else is internal, whatever its Java visibility. A public or protected signature of a
 * marked type mentions only marked types of this project (a test checks it, reading the mark at run
 * time).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE})
public @interface Public {}
