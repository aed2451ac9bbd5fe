package secondbrain;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node in this JVM, bound to 127.0.0.1, security off, with HTTP, the ngram analyzers, painless and the
 * k-NN plugin loaded from the classpath. Only the lucene k-NN engine may be used: the native engines' libraries
 * are not here. Usage: OpenSearchNode HOME HTTP_PORT. Prints "READY <port>" once it answers.
 */
public final class OpenSearchNode {

    /** Node's constructor that takes classpath plugins is protected. */
    static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
            super(environment, plugins, true);
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        Files.createDirectories(home.resolve("config"));
        System.setProperty("opensearch.set.netty.runtime.available.processors", "false");
        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", home.resolve("data").toString())
            .put("path.logs", home.resolve("logs").toString())
            .put("cluster.name", "second-brain-tests")
            .put("node.name", "node-1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", "0")
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", false)
            .build();
        List<Class<? extends Plugin>> plugins = new ArrayList<>();
        plugins.add(Netty4Plugin.class);
        plugins.add(CommonAnalysisPlugin.class);
        plugins.add(PainlessPlugin.class); // the scripted upserts that refuse a stale projection's write
        plugins.add((Class<? extends Plugin>) Class.forName("org.opensearch.knn.plugin.KNNPlugin"));
        Environment environment = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> "node-1");
        Node node = new EmbeddedNode(environment, plugins);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (Exception ignored) {
                // the JVM is going away either way
            }
        }));
        node.start();
        System.out.println("READY " + port);
        System.out.flush();
        Thread.currentThread().join();
    }
}
