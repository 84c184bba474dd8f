package dev.ratelimit.redis.lettuce;

import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.StoreCheck;
import dev.ratelimit.testsupport.RequiredTools;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisTls;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The conformance kit over TLS ({@code rediss://}, certificates generated for the test), logged in as an ACL
 * user that has exactly the rule the store documents.
 */
class LettuceTlsConformanceTest extends LettuceDeploymentConformance {

    @Override
    RedisClient start(Deque<AutoCloseable> started) {
        RequiredTools.require("apt-get install openssl", RequiredTools.onPath("openssl")); // RedisTls runs it
        RedisTls tls = RedisTls.generate();
        started.push(tls::delete);
        int tlsPort = RedisTls.freePort();
        List<String> arguments = new ArrayList<>(List.of("--user", "ratelimit", "on", ">limited"));
        arguments.addAll(
                List.of(StoreCheck.aclRule(KeySpace.of(KeyLayout.STANDALONE)).split(" ")));
        arguments.addAll(tls.serverArguments(tlsPort));
        started.push(RedisServer.startWithPassword("admin-secret", arguments));
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost(RedisServer.HOST)
                .withPort(tlsPort)
                .withSsl(true)
                .withAuthentication("ratelimit", "limited")
                .withTimeout(Duration.ofSeconds(5))
                .build());
        client.setOptions(client.getOptions()
                .mutate()
                .sslOptions(SslOptions.builder()
                        .truststore(tls.trustStore().toFile(), RedisTls.TRUST_STORE_PASSWORD)
                        .build())
                .build());
        return client;
    }
}
