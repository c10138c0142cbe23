package dev.overlap.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.UnknownKeys;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.launcher.JavaModuleOptions;
import org.junit.jupiter.api.Test;

/**
 * The recipe's files as a client-side dry run would check them: each YAML file decodes into
 * fabric8's typed models with no unknown field, the Spark Operator application has the fields its
 * v1beta2 API requires and no other, and the three descriptions of one application (spark-defaults,
 * the pod templates, the SparkApplication) agree.
 */
class RecipeFilesTest {
  // The v1beta2 API's fields (SparkApplicationSpec, SparkPodSpec, DriverSpec, ExecutorSpec).
  private static final Set<String> SPEC_FIELDS =
      Set.of(
          "type",
          "sparkVersion",
          "mode",
          "proxyUser",
          "image",
          "imagePullPolicy",
          "imagePullSecrets",
          "mainClass",
          "mainApplicationFile",
          "arguments",
          "sparkConf",
          "hadoopConf",
          "sparkConfigMap",
          "hadoopConfigMap",
          "volumes",
          "driver",
          "executor",
          "deps",
          "restartPolicy",
          "nodeSelector",
          "failureRetries",
          "retryInterval",
          "pythonVersion",
          "memoryOverheadFactor",
          "monitoring",
          "batchScheduler",
          "timeToLiveSeconds",
          "batchSchedulerOptions",
          "sparkUIOptions",
          "driverIngressOptions",
          "dynamicAllocation");
  private static final Set<String> POD_FIELDS =
      Set.of(
          "template",
          "cores",
          "coreLimit",
          "memory",
          "memoryOverhead",
          "gpu",
          "image",
          "configMaps",
          "secrets",
          "env",
          "envVars",
          "envFrom",
          "envSecretKeyRefs",
          "labels",
          "annotations",
          "volumeMounts",
          "affinity",
          "tolerations",
          "podSecurityContext",
          "securityContext",
          "schedulerName",
          "sidecars",
          "initContainers",
          "hostNetwork",
          "nodeSelector",
          "dnsConfig",
          "terminationGracePeriodSeconds",
          "serviceAccount",
          "hostAliases",
          "shareProcessNamespace",
          "runtimeClassName",
          "coreRequest",
          "javaOptions",
          "lifecycle",
          "ports",
          "priorityClassName");
  private static final Set<String> DRIVER_ONLY =
      Set.of("podName", "kubernetesMaster", "serviceAnnotations", "serviceLabels");
  private static final Set<String> EXECUTOR_ONLY = Set.of("instances", "deleteOnTermination");

  /** spark-defaults keys that the SparkApplication gives through a field of its own. */
  private static final Map<String, String> AS_FIELDS =
      Map.of(
          "spark.kubernetes.container.image", "image",
          "spark.kubernetes.authenticate.driver.serviceAccountName", "driver.serviceAccount",
          "spark.driver.cores", "driver.cores",
          "spark.driver.memory", "driver.memory",
          "spark.executor.instances", "executor.instances",
          "spark.executor.cores", "executor.cores",
          "spark.executor.memory", "executor.memory",
          "spark.executor.memoryOverhead", "executor.memoryOverhead",
          "spark.kubernetes.driver.podTemplateFile", "driver.template",
          "spark.kubernetes.executor.podTemplateFile", "executor.template");

  @Test
  void podTemplatesDecodeAsPodsWithNoUnknownField() {
    for (Path yaml : List.of(Recipe.DRIVER_TEMPLATE, Recipe.EXECUTOR_TEMPLATE)) {
      Pod pod = Recipe.pod(yaml);
      assertEquals("v1", pod.getApiVersion(), yaml.toString());
      assertEquals("Pod", pod.getKind(), yaml.toString());
      assertEquals(List.of(), UnknownFields.in(pod), yaml + ": fields Kubernetes does not know");
      assertEquals(1, pod.getSpec().getContainers().size(), yaml + ": Spark's container alone");
      for (var c : pod.getSpec().getContainers()) {
        for (VolumeMount m : c.getVolumeMounts()) {
          assertTrue(
              pod.getSpec().getVolumes().stream().anyMatch(v -> v.getName().equals(m.getName())),
              yaml + ": mount " + m.getName() + " names no volume of the pod");
        }
      }
    }
  }

  @Test
  void unknownFieldsAreFoundWhereverTheyAre() {
    Pod typo =
        Serialization.unmarshal(
            "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n"
                + "      volumeMount:\n        - name: dshm\n",
            Pod.class);
    assertEquals(List.of(".spec.containers[0].volumeMount"), UnknownFields.in(typo));
  }

  @Test
  void sparkApplicationHasTheRequiredFieldsAndNoOther() {
    GenericKubernetesResource app = Recipe.resource(Recipe.APPLICATION);
    assertEquals("sparkoperator.k8s.io/v1beta2", app.getApiVersion());
    assertEquals("SparkApplication", app.getKind());
    assertNotNull(app.getMetadata().getName(), "metadata.name");
    Map<String, Object> spec = map(app.getAdditionalProperties().get("spec"), "spec");
    assertEquals(Set.of("spec"), app.getAdditionalProperties().keySet(), "top-level fields");
    for (String required :
        List.of("type", "sparkVersion", "mainApplicationFile", "driver", "executor")) {
      assertNotNull(spec.get(required), "spec." + required + " is required");
    }
    assertEquals(Set.of(), unknown(spec.keySet(), SPEC_FIELDS), "spec: fields v1beta2 lacks");
    assertEquals("Java", spec.get("type"));
    assertEquals("cluster", spec.get("mode"));
    assertEquals("dev.overlap.jobs.Main", spec.get("mainClass"));
    assertEquals(Recipe.JOBS_JAR, spec.get("mainApplicationFile"));
    assertEquals("Never", map(spec.get("restartPolicy"), "restartPolicy").get("type"));
    List<Volume> volumes = typedList(spec.get("volumes"), Volume.class);
    assertEquals(List.of(), UnknownFields.in(volumes), "spec.volumes");

    for (String side : List.of("driver", "executor")) {
      Map<String, Object> pod = map(spec.get(side), side);
      Set<String> known = new TreeSet<>(POD_FIELDS);
      known.addAll(side.equals("driver") ? DRIVER_ONLY : EXECUTOR_ONLY);
      assertEquals(Set.of(), unknown(pod.keySet(), known), side + ": fields v1beta2 lacks");
      List<VolumeMount> mounts = typedList(pod.get("volumeMounts"), VolumeMount.class);
      assertEquals(List.of(), UnknownFields.in(mounts), side + ".volumeMounts");
      for (VolumeMount m : mounts) {
        assertTrue(
            volumes.stream().anyMatch(v -> v.getName().equals(m.getName())),
            side + ": mount " + m.getName() + " names no volume of spec.volumes");
      }
      assertInstanceOf(Integer.class, pod.get("cores"), side + ".cores is an integer");
    }
    assertInstanceOf(
        Integer.class, map(spec.get("executor"), "executor").get("instances"), "instances");
  }

  @Test
  void sparkApplicationTemplatesAreThePodTemplateFiles() {
    Map<String, Object> spec = spec();
    for (String side : List.of("driver", "executor")) {
      Object raw = map(spec.get(side), side).get("template");
      PodTemplateSpec inline =
          Serialization.unmarshal(Serialization.asJson(raw), PodTemplateSpec.class);
      assertEquals(List.of(), UnknownFields.in(inline), side + ".template");
      Pod file =
          Recipe.pod(side.equals("driver") ? Recipe.DRIVER_TEMPLATE : Recipe.EXECUTOR_TEMPLATE);
      assertEquals(file.getMetadata(), inline.getMetadata(), side + ".template's metadata");
      assertEquals(file.getSpec(), inline.getSpec(), side + ".template's spec");
    }
  }

  @Test
  void sparkApplicationSaysWhatSparkDefaultsSays() {
    Map<String, Object> spec = spec();
    @SuppressWarnings("unchecked")
    Map<String, Object> sparkConf = (Map<String, Object>) spec.get("sparkConf");
    List<String> disagreements = new ArrayList<>();
    Recipe.defaults()
        .forEach(
            (key, value) -> {
              String field = AS_FIELDS.get(key);
              if (field != null && field.endsWith(".template")) {
                return; // sparkApplicationTemplatesAreThePodTemplateFiles
              }
              Object theirs = field != null ? at(spec, field) : sparkConf.get(key);
              if (theirs == null || !value.equals(String.valueOf(theirs))) {
                disagreements.add(
                    key
                        + "="
                        + value
                        + " but "
                        + (field != null ? field : "sparkConf")
                        + " has "
                        + theirs);
              }
            });
    Map<String, String> defaults = Recipe.defaults();
    sparkConf.forEach(
        (key, value) -> {
          if (!String.valueOf(value).equals(defaults.get(key))) {
            disagreements.add("sparkConf " + key + "=" + value + " is not in spark-defaults.conf");
          }
        });
    assertEquals(List.of(), disagreements);
  }

  @Test
  void overlapKeysAreRegisteredAndTheirValuesValid() {
    Map<String, String> all = new HashMap<>(Recipe.defaults());
    map(spec().get("sparkConf"), "sparkConf").forEach((k, v) -> all.put(k, String.valueOf(v)));
    UnknownKeys.check(all.keySet());
    OverlapConf conf = OverlapConf.read(all::get);
    assertEquals(2L << 30, conf.get(OverlapConf.PREFETCH_MAX_BYTES));
    assertEquals(8, conf.get(OverlapConf.STAGING_BUFFERS));
  }

  @Test
  void theImagesSparkLauncherAddsEveryJvmOptionTheProjectNeeds() throws Exception {
    // The project's other recipes pass conf/jvm-options.txt by hand; in the image Spark's own
    // launcher and SparkContext add its module options, so nothing else is needed there.
    List<String> needed = new ArrayList<>();
    for (String line : Files.readAllLines(Recipe.ROOT.resolve("conf/jvm-options.txt"))) {
      if (!line.isBlank()) {
        needed.add(line.trim());
      }
    }
    assertFalse(needed.isEmpty());
    List<String> spark = List.of(JavaModuleOptions.defaultModuleOptionArray());
    assertEquals(
        List.of(), needed.stream().filter(o -> !spark.contains(o)).toList(), "not added by Spark");
  }

  private static Map<String, Object> spec() {
    return map(Recipe.resource(Recipe.APPLICATION).getAdditionalProperties().get("spec"), "spec");
  }

  private static Object at(Map<String, Object> spec, String dotted) {
    Object o = spec;
    for (String part : dotted.split("\\.")) {
      o = map(o, dotted).get(part);
    }
    return o;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String what) {
    assertInstanceOf(Map.class, o, what + " is a mapping");
    return (Map<String, Object>) o;
  }

  private static <T> List<T> typedList(Object raw, Class<T> type) {
    assertInstanceOf(List.class, raw);
    List<T> out = new ArrayList<>();
    for (Object item : (List<?>) raw) {
      out.add(Serialization.unmarshal(Serialization.asJson(item), type));
    }
    return out;
  }

  private static Set<String> unknown(Set<String> keys, Set<String> known) {
    Set<String> out = new TreeSet<>(keys);
    out.removeAll(known);
    return out;
  }
}
