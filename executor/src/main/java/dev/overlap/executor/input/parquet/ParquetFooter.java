package dev.overlap.executor.input.parquet;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * A Parquet file's footer: its thrift bytes (what cuDF's reader is built from) and the metadata
 * parquet-hadoop parses from them (what the row-group choice and the checks read). Footers are
 * cached per executor by path, size and modification time.
 */
public final class ParquetFooter {
  private static final int CACHED = 4096;
  private static final Map<String, ParquetFooter> CACHE =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, ParquetFooter> e) {
          return size() > CACHED;
        }
      };

  private final byte[] bytes;
  private final ParquetMetadata metadata;
  // cuDF's verdict on these bytes per set of columns read: empty when its reader takes them, else
  // the reason. Cached with the footer, so each task of a file does not parse it again.
  private final Map<java.util.List<String>, String> cudfVerdicts =
      new java.util.concurrent.ConcurrentHashMap<>();

  ParquetFooter(byte[] bytes, ParquetMetadata metadata) {
    this.bytes = bytes;
    this.metadata = metadata;
  }

  // The footer cut down to some top-level columns, per set of columns (FooterProjection).
  private final Map<java.util.List<String>, byte[]> projections =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** The footer's thrift bytes naming only the top-level columns {@code columns}; cached. */
  public byte[] projected(String[] columns) {
    return projections.computeIfAbsent(
        java.util.List.of(columns),
        k -> FooterProjection.project(bytes, java.util.Set.of(columns)));
  }

  /** The footer's thrift bytes, without the length and magic that follow them in the file. */
  public byte[] bytes() {
    return bytes;
  }

  public ParquetMetadata metadata() {
    return metadata;
  }

  /**
   * cuDF's verdict on this footer when reading {@code columns}: {@code check}'s, once per set of
   * columns (empty when cuDF's reader takes the footer, else the reason it does not).
   */
  public String cudfVerdict(String[] columns, java.util.function.Supplier<String> check) {
    return cudfVerdicts.computeIfAbsent(java.util.List.of(columns), c -> check.get());
  }

  /**
   * The footer of {@code split}'s file, from the cache or read with two positional reads.
   *
   * @throws NotForGpu when the file is not a plain Parquet file (an encrypted footer, no magic)
   */
  public static ParquetFooter of(FileSplit split, Configuration conf)
      throws IOException, NotForGpu {
    String key = split.path() + "|" + split.fileSize() + "|" + split.modificationTime();
    synchronized (CACHE) {
      ParquetFooter f = CACHE.get(key);
      if (f != null) {
        return f;
      }
    }
    ParquetFooter f = read(split, conf);
    synchronized (CACHE) {
      CACHE.put(key, f);
    }
    return f;
  }

  private static ParquetFooter read(FileSplit split, Configuration conf)
      throws IOException, NotForGpu {
    Path path = new Path(java.net.URI.create(split.path()));
    long size = split.fileSize();
    if (size < 12) {
      throw new NotForGpu(split.fileName() + " is too small to be a Parquet file");
    }
    FileSystem fs = path.getFileSystem(conf);
    try (FSDataInputStream in = fs.open(path)) {
      byte[] tail = new byte[8];
      in.readFully(size - 8, tail);
      String magic = new String(tail, 4, 4, StandardCharsets.US_ASCII);
      if (magic.equals("PARE")) {
        throw new NotForGpu(split.fileName() + " has an encrypted footer");
      }
      if (!magic.equals("PAR1")) {
        throw new NotForGpu(split.fileName() + " does not end with Parquet's magic bytes");
      }
      int length = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      if (length <= 0 || length > size - 12) {
        throw new NotForGpu(split.fileName() + " has a footer length out of range: " + length);
      }
      byte[] bytes = new byte[length];
      in.readFully(size - 8 - length, bytes);
      return new ParquetFooter(bytes, parse(bytes, ParquetMetadataConverter.NO_FILTER));
    }
  }

  /**
   * With read options: Parquet 1.17 (Spark 4.2) refuses to parse a footer through a converter made
   * without them ("Max message size must be positive: -1").
   */
  private static final ParquetMetadataConverter CONVERTER =
      new ParquetMetadataConverter(
          ParquetReadOptions.builder(new PlainParquetConfiguration()).build());

  private static ParquetMetadata parse(byte[] bytes, ParquetMetadataConverter.MetadataFilter f)
      throws IOException {
    return CONVERTER.readParquetMetadata(new ByteArrayInputStream(bytes), f);
  }

  /**
   * The row groups (indices in the file) that belong to the split {@code [start, start + length)}:
   * exactly those parquet-hadoop's reader, and therefore Spark's, reads for that split (a row group
   * belongs to the split that holds its midpoint).
   */
  public int[] rowGroupsOf(long start, long length) throws IOException {
    ParquetMetadata mine = parse(bytes, ParquetMetadataConverter.range(start, start + length));
    List<BlockMetaData> all = metadata.getBlocks();
    List<Integer> out = new ArrayList<>();
    int at = 0;
    for (BlockMetaData b : mine.getBlocks()) {
      // Both lists are in file order; a row group is known by where it starts.
      while (at < all.size() && all.get(at).getStartingPos() != b.getStartingPos()) {
        at++;
      }
      if (at == all.size()) {
        throw new IOException("row group at " + b.getStartingPos() + " not in the footer");
      }
      out.add(at++);
    }
    return out.stream().mapToInt(Integer::intValue).toArray();
  }
}
