package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * micrometer-core is an optional dependency of the core: a limiter built without a meter registry
 * runs in a class loader that holds the test class path less every Micrometer jar.
 */
class MicrometerOptionalTest {

    @Test
    @DisplayName(
            "a limiter without a MeterRegistry checks, reserves, settles and fails open or closed with no Micrometer class")
    void runsWithoutMicrometer() throws Exception {
        List<URL> urls = new ArrayList<>();
        // surefire runs the tests from a manifest-only jar and names the real class path here
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (String entry : classPath.split(File.pathSeparator)) {
            if (!entry.isEmpty() && !Path.of(entry).getFileName().toString().startsWith("micrometer-")) {
                urls.add(url(entry));
            }
        }
        try (URLClassLoader loader =
                new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader))
                    .as("the loader holds no Micrometer")
                    .isInstanceOf(ClassNotFoundException.class);
            @SuppressWarnings("unchecked")
            Callable<List<String>> probe =
                    (Callable<List<String>>) Class.forName(WithoutMicrometer.class.getName(), true, loader)
                            .getConstructor()
                            .newInstance();
            assertThat(probe.getClass().getClassLoader()).isSameAs(loader);
            assertThat(probe.call())
                    .containsExactly(
                            "check true",
                            "reserve true",
                            "check false",
                            "fail open true degraded true",
                            "fail closed refused");
        }
    }

    private static URL url(String entry) {
        try {
            return Path.of(entry).toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        }
    }
}
