package dev.overlap.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.overlap.executor.plugin.OverlapDriverPlugin;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.InProcessSparkSubmit;
import org.apache.spark.deploy.k8s.KubernetesConf$;
import org.apache.spark.deploy.k8s.KubernetesExecutorConf;
import org.apache.spark.deploy.k8s.KubernetesExecutorSpec;
import org.apache.spark.resource.ExecutorResourceRequest;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;

/**
 * Spark's own Kubernetes submission ({@code spark-submit --master k8s://... --deploy-mode cluster}
 * with the recipe's spark-defaults.conf and pod templates) against fabric8's mock API server, then
 * Spark's executor pod builder on the configuration the driver pod receives: the pods a cluster
 * would be asked for. Nothing runs in them here.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesSubmissionTest {
  private static final String NAMESPACE = "default";
  private static final String GPU = "nvidia.com/gpu";
  private static final List<String> ETL_ARGS =
      List.of("etl", "--input", "/data/tpch-sf10/lineitem", "--output", "/data/out/etl");

  private final Map<String, String> recipe = Recipe.defaults();
  private KubernetesMockServer server;
  private KubernetesClient client;
  private Pod driver;
  private Map<String, String> driverConf;
  private String executorTemplate;
  private Pod executor;
  private ResourceProfile profile;

  @BeforeAll
  void submitAndBuildAnExecutor(@TempDir Path tmp) throws IOException {
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new ApplyingCrudDispatcher(),
            false);
    server.init();
    client = server.createClient();

    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "--master",
            "k8s://" + server.url("/").replaceAll("/$", ""),
            "--deploy-mode",
            "cluster",
            "--name",
            "overlap-etl",
            "--properties-file",
            Recipe.DEFAULTS.toString()));
    // The template paths are relative to the project folder, where the recipe says to submit from.
    for (String key :
        List.of(
            "spark.kubernetes.driver.podTemplateFile",
            "spark.kubernetes.executor.podTemplateFile")) {
      Path template = Recipe.fromRoot(recipe.get(key));
      assertTrue(Files.isRegularFile(template), key + " names no file from the project folder");
      args.addAll(List.of("--conf", key + "=" + template));
    }
    args.addAll(List.of("--conf", "spark.kubernetes.submission.waitAppCompletion=false"));
    args.addAll(List.of("--class", "dev.overlap.jobs.Main", Recipe.JOBS_JAR));
    args.addAll(ETL_ARGS);
    InProcessSparkSubmit.main(args.toArray(new String[0]));

    List<Pod> pods = client.pods().inNamespace(NAMESPACE).list().getItems();
    assertEquals(1, pods.size(), "the submission creates the driver pod alone");
    driver = pods.get(0);
    driverConf = sparkProperties(driver);
    executorTemplate = executorTemplateConfigMap(driver);

    // In the driver pod, the executor template is the config map mounted where the driver's
    // configuration points; here it is a file of the same content.
    Path mounted = tmp.resolve("pod-spec-template.yml");
    Files.writeString(mounted, executorTemplate, StandardCharsets.UTF_8);
    SparkConf conf = new SparkConf(false);
    driverConf.forEach(conf::set);
    conf.set("spark.kubernetes.executor.podTemplateFile", mounted.toString());
    profile = org.apache.spark.resource.ResourceProfile$.MODULE$.getOrCreateDefaultProfile(conf);
    KubernetesExecutorConf executorConf =
        KubernetesConf$.MODULE$.createExecutorConf(
            conf,
            "1",
            driver.getMetadata().getLabels().get("spark-app-selector"),
            Option.apply(driver),
            ResourceProfile.DEFAULT_RESOURCE_PROFILE_ID());
    SecurityManager security =
        new SecurityManager(
            conf,
            Option.empty(),
            org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE());
    KubernetesExecutorSpec spec =
        new KubernetesExecutorBuilder().buildFromFeatures(executorConf, security, client, profile);
    // As Spark's executor pod allocator does: the container into the pod, and the pod created.
    Pod built =
        new PodBuilder(spec.pod().pod())
            .editOrNewSpec()
            .addToContainers(spec.pod().container())
            .endSpec()
            .build();
    executor = client.pods().inNamespace(NAMESPACE).resource(built).create();
  }

  @AfterAll
  void stopServer() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.destroy();
    }
  }

  @Test
  void driverRunsTheJobFromTheImage() {
    Container c = container(driver, "spark-kubernetes-driver");
    assertEquals(recipe.get("spark.kubernetes.container.image"), c.getImage());
    List<String> expected = new ArrayList<>();
    expected.addAll(
        List.of(
            "driver",
            "--properties-file",
            "/opt/spark/conf/spark.properties",
            "--class",
            "dev.overlap.jobs.Main",
            Recipe.JOBS_JAR));
    expected.addAll(ETL_ARGS);
    assertEquals(expected, c.getArgs());
    assertEquals(
        recipe.get("spark.kubernetes.authenticate.driver.serviceAccountName"),
        driver.getSpec().getServiceAccountName());
  }

  @Test
  void driverAsksForNoGpu() {
    Container c = container(driver, "spark-kubernetes-driver");
    assertFalse(c.getResources().getLimits().containsKey(GPU), "limits: " + c.getResources());
    assertTrue(
        driverConf.keySet().stream().noneMatch(k -> k.startsWith("spark.driver.resource.")),
        "the driver's configuration asks for no resource: " + driverConf.keySet());
  }

  @Test
  void driverConfigurationCarriesThePluginAndGpuScheduling() {
    assertEquals(OverlapDriverPlugin.PLUGIN_CLASS, driverConf.get("spark.plugins"));
    for (String key :
        List.of(
            "spark.executor.resource.gpu.amount",
            "spark.executor.resource.gpu.vendor",
            "spark.executor.resource.gpu.discoveryScript",
            "spark.task.resource.gpu.amount",
            "spark.driver.extraClassPath",
            "spark.executor.extraClassPath",
            "spark.overlap.prefetch.maxBytes",
            "spark.overlap.staging.buffers")) {
      assertNotNull(recipe.get(key), key + " is in the recipe");
      assertEquals(recipe.get(key), driverConf.get(key), key);
    }
    assertEquals("nvidia.com", driverConf.get("spark.executor.resource.gpu.vendor"));
    assertEquals(Recipe.JARS_DIR + "/*", driverConf.get("spark.executor.extraClassPath"));
    assertTrue(
        Arrays.asList(driverConf.get("spark.jars").split(",")).contains(Recipe.JOBS_JAR),
        "spark.jars: " + driverConf.get("spark.jars"));
  }

  @Test
  void driverPodMergesItsTemplate() {
    Pod template = Recipe.pod(Recipe.DRIVER_TEMPLATE);
    assertEquals(
        template.getSpec().getSecurityContext().getRunAsUser(),
        driver.getSpec().getSecurityContext().getRunAsUser());
    assertEquals("driver", driver.getMetadata().getLabels().get("app.kubernetes.io/component"));
    assertEquals("driver", driver.getMetadata().getLabels().get("spark-role"));
    Container c = container(driver, "spark-kubernetes-driver");
    assertLocalDirFromTemplate(driver, c);
  }

  @Test
  void executorTemplateShipsToTheDriverUnchanged() {
    assertEquals(Recipe.text(Recipe.EXECUTOR_TEMPLATE), executorTemplate);
    assertEquals(
        "/opt/spark/pod-template/pod-spec-template.yml",
        driverConf.get("spark.kubernetes.executor.podTemplateFile"));
  }

  @Test
  void executorGetsOneGpuFromTheConfigurationAndTheTemplateAlike() {
    Container c = container(executor, "spark-kubernetes-executor");
    Quantity fromSpark = c.getResources().getLimits().get(GPU);
    assertEquals(new Quantity(recipe.get("spark.executor.resource.gpu.amount")), fromSpark);
    Quantity fromTemplate =
        container(Recipe.pod(Recipe.EXECUTOR_TEMPLATE), "spark-kubernetes-executor")
            .getResources()
            .getLimits()
            .get(GPU);
    assertEquals(fromTemplate, fromSpark);
    assertEquals(new Quantity("1"), fromSpark, "Overlap drives one GPU per executor");
  }

  @Test
  void executorResourceProfileDiscoversTheGpuAndSharesItAmongAllCores() {
    ExecutorResourceRequest gpu = profile.executorResourcesJMap().get("gpu");
    assertNotNull(gpu, "the executor asks Spark for a gpu resource");
    assertEquals(1L, gpu.amount());
    assertEquals("nvidia.com", gpu.vendor());
    assertEquals(recipe.get("spark.executor.resource.gpu.discoveryScript"), gpu.discoveryScript());
    assertEquals(0.25, profile.taskResourcesJMap().get("gpu").amount());
    SparkConf conf = new SparkConf(false);
    driverConf.forEach(conf::set);
    int cores = Integer.parseInt(recipe.get("spark.executor.cores"));
    // The cores, not the GPU's share per task, bound the tasks running at once: none idle.
    assertEquals(ResourceProfile.CPUS(), profile.limitingResource(conf));
    assertEquals(cores, profile.maxTasksPerExecutor(conf));
  }

  @Test
  void executorPodMergesItsTemplate() {
    assertEquals("executor", executor.getMetadata().getLabels().get("app.kubernetes.io/component"));
    assertEquals("executor", executor.getMetadata().getLabels().get("spark-role"));
    assertEquals(185L, executor.getSpec().getSecurityContext().getRunAsUser());
    Container c = container(executor, "spark-kubernetes-executor");
    assertEquals(recipe.get("spark.kubernetes.container.image"), c.getImage());
    Volume shm = volume(executor, "dshm");
    assertEquals("Memory", shm.getEmptyDir().getMedium());
    assertEquals("/dev/shm", mount(c, "dshm").getMountPath());
    assertLocalDirFromTemplate(executor, c);
    assertEquals(Recipe.JARS_DIR + "/*", env(c, "SPARK_CLASSPATH"));
    assertEquals(
        driver.getMetadata().getName(),
        executor.getMetadata().getOwnerReferences().get(0).getName());
  }

  @Test
  void executorPodMemoryLimitHoldsTheOverhead() {
    Container c = container(executor, "spark-kubernetes-executor");
    long heapMib = mib(recipe.get("spark.executor.memory"));
    long overheadMib = mib(recipe.get("spark.executor.memoryOverhead"));
    assertEquals(
        new Quantity((heapMib + overheadMib) + "Mi"), c.getResources().getLimits().get("memory"));
  }

  private static void assertLocalDirFromTemplate(Pod pod, Container c) {
    VolumeMount local = mount(c, "spark-local-dir-1");
    assertNotNull(volume(pod, "spark-local-dir-1").getEmptyDir());
    assertEquals(local.getMountPath(), env(c, "SPARK_LOCAL_DIRS"));
    assertTrue(
        c.getVolumeMounts().stream().filter(m -> m.getName().startsWith("spark-local-dir-")).count()
            == 1,
        "Spark adds no local dir of its own beside the template's: " + c.getVolumeMounts());
  }

  private Map<String, String> sparkProperties(Pod pod) throws IOException {
    String name =
        pod.getSpec().getVolumes().stream()
            .filter(v -> v.getName().equals("spark-conf-volume-driver"))
            .findFirst()
            .orElseThrow()
            .getConfigMap()
            .getName();
    ConfigMap cm = client.configMaps().inNamespace(NAMESPACE).withName(name).get();
    assertNotNull(cm, "config map " + name);
    Properties p = new Properties();
    p.load(new StringReader(cm.getData().get("spark.properties")));
    Map<String, String> out = new HashMap<>();
    p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k)));
    return out;
  }

  private String executorTemplateConfigMap(Pod pod) {
    String name =
        pod.getSpec().getVolumes().stream()
            .filter(v -> v.getName().equals("pod-template-volume"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("the driver mounts no executor pod template"))
            .getConfigMap()
            .getName();
    ConfigMap cm = client.configMaps().inNamespace(NAMESPACE).withName(name).get();
    assertNotNull(cm, "config map " + name);
    return cm.getData().get("podspec-configmap-key");
  }

  private static Container container(Pod pod, String name) {
    return pod.getSpec().getContainers().stream()
        .filter(c -> c.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container " + name + " in " + pod.getSpec()));
  }

  private static Volume volume(Pod pod, String name) {
    return pod.getSpec().getVolumes().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume " + name));
  }

  private static VolumeMount mount(Container c, String name) {
    return c.getVolumeMounts().stream()
        .filter(m -> m.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no volume mount " + name));
  }

  private static String env(Container c, String name) {
    return c.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .map(EnvVar::getValue)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no variable " + name + " in " + c.getEnv()));
  }

  private static long mib(String size) {
    return org.apache.spark.network.util.JavaUtils.byteStringAsMb(size);
  }
}
