package dev.overlap.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;

/**
 * The mock API server's CRUD mode with server-side apply, which Spark's submission uses for the
 * driver's service and config maps: applying an object that does not exist creates it; applying one
 * that exists merges the applied fields into it (a JSON merge patch). Field ownership and
 * conflicts, which a real API server tracks, are not modelled.
 */
final class ApplyingCrudDispatcher extends KubernetesCrudDispatcher {
  private static final String APPLY = "application/apply-patch+yaml";

  @Override
  public MockResponse handlePatch(RecordedRequest request) {
    String type = request.getHeader("Content-Type");
    if (type == null || !type.startsWith(APPLY)) {
      return super.handlePatch(request);
    }
    String path = request.getPath();
    String object = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
    String json =
        Serialization.asJson(
            Serialization.unmarshal(request.getUtf8Body(), GenericKubernetesResource.class));
    Headers headers = Headers.builder().add("Content-Type", "application/json").build();
    if (handleGet(object).code() == 404) {
      String collection = object.substring(0, object.lastIndexOf('/'));
      return handleCreate(
          new RecordedRequest("HTTP/1.1", HttpMethod.POST, collection, headers, body(json)));
    }
    Headers merge = Headers.builder().add("Content-Type", "application/merge-patch+json").build();
    return super.handlePatch(
        new RecordedRequest("HTTP/1.1", HttpMethod.PATCH, object, merge, body(json)));
  }

  private static Buffer body(String json) {
    return new Buffer(json.getBytes(StandardCharsets.UTF_8));
  }
}
