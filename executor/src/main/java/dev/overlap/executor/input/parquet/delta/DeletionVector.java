package dev.overlap.executor.input.parquet.delta;

import java.io.Serializable;

/**
 * Where one file's deletion vector lies: Delta's descriptor of it, as Delta's file index gives it
 * with the file (inline, or a place in a file of the table's folder), and the table's folder.
 *
 * @param descriptor Delta's {@code DeletionVectorDescriptor}, serialized to Base64 by Delta
 * @param table the table's folder, which a descriptor's relative path starts from
 */
public record DeletionVector(String descriptor, String table) implements Serializable {}
