package dev.ratelimit.testsupport.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made for one test run with the {@code openssl} and {@code keytool} command-line
 * tools: a throw-away certificate authority, a server certificate for {@value RedisServer#HOST}
 * signed by it, and a PKCS#12 trust store holding the authority for Java clients.
 *
 * @param directory where the files are
 * @param trustStore the PKCS#12 trust store of the authority, password {@link #TRUST_STORE_PASSWORD}
 */
public record RedisTls(Path directory, Path trustStore) {

    /** The trust store's password. */
    public static final String TRUST_STORE_PASSWORD = "changeit";

    /**
     * Generates the authority, the server certificate and the trust store in a new temporary
     * directory.
     *
     * @return the files
     * @throws IllegalStateException if {@code openssl} or {@code keytool} fails
     */
    public static RedisTls generate() {
        try {
            Path directory = Files.createTempDirectory("ratelimit-tls-");
            run(
                    directory,
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=ratelimit-test-ca",
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.crt");
            run(
                    directory,
                    "openssl",
                    "req",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-subj",
                    "/CN=" + RedisServer.HOST,
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr");
            Files.writeString(
                    directory.resolve("san.ext"), "subjectAltName=IP:" + RedisServer.HOST + ",DNS:localhost\n");
            run(
                    directory,
                    "openssl",
                    "x509",
                    "-req",
                    "-in",
                    "server.csr",
                    "-CA",
                    "ca.crt",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-extfile",
                    "san.ext",
                    "-out",
                    "server.crt");
            String keytool =
                    Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            run(
                    directory,
                    keytool,
                    "-importcert",
                    "-noprompt",
                    "-alias",
                    "ca",
                    "-file",
                    "ca.crt",
                    "-keystore",
                    "truststore.p12",
                    "-storetype",
                    "PKCS12",
                    "-storepass",
                    TRUST_STORE_PASSWORD);
            return new RedisTls(directory, directory.resolve("truststore.p12"));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot generate TLS files", e);
        }
    }

    /**
     * Returns the {@code redis-server} arguments that open a TLS port with these certificates
     * (clients need no certificate of their own); the plain port stays open for the fixture.
     *
     * @param tlsPort the TLS port
     * @return the arguments
     */
    public List<String> serverArguments(int tlsPort) {
        return new ArrayList<>(List.of(
                "--tls-port", Integer.toString(tlsPort),
                "--tls-cert-file", directory.resolve("server.crt").toString(),
                "--tls-key-file", directory.resolve("server.key").toString(),
                "--tls-ca-cert-file", directory.resolve("ca.crt").toString(),
                "--tls-auth-clients", "no"));
    }

    /**
     * Returns a port that is free now, for {@link #serverArguments}.
     *
     * @return the port
     */
    public static int freePort() {
        return RedisServer.freePort();
    }

    /** Deletes the files. */
    public void delete() {
        RedisServer.deleteRecursively(directory);
    }

    private static void run(Path directory, String... command) {
        try {
            Process process = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(directory.resolve("tools.log").toFile())
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " failed: " + RedisServer.tail(directory.resolve("tools.log")));
            }
        } catch (IOException e) {
            throw new IllegalStateException("Cannot run " + command[0] + " (is it installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
    }
}
