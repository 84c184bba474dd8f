package dev.ratelimit.spring.cloud.gateway.secured;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * A gateway behind Spring Security, as a JWT resource server, with the gateway's default key
 * resolver (the principal's name) and the starter's default tier resolver (the {@code plan} claim):
 * routes in secured.yml (test resources), no key or tier code of its own.
 */
@SpringBootApplication
public class SecuredGatewayApp {

    private static final byte[] SECRET =
            "ratelimit-spring-cloud-gateway-tests-only-secret".getBytes(StandardCharsets.UTF_8);

    @Bean
    SecurityWebFilterChain security(ServerHttpSecurity http) {
        return http.authorizeExchange(exchanges -> exchanges.anyExchange().authenticated())
                .oauth2ResourceServer(server -> server.jwt(Customizer.withDefaults()))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .build();
    }

    @Bean
    ReactiveJwtDecoder jwtDecoder() {
        return NimbusReactiveJwtDecoder.withSecretKey(new SecretKeySpec(SECRET, "HmacSHA256"))
                .build();
    }

    /** An HS256 token the decoder accepts, for {@code subject} with a {@code plan} claim unless null. */
    public static String token(String subject, String plan) {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
                .subject(subject)
                .expirationTime(Date.from(Instant.now().plusSeconds(3600)));
        SignedJWT jwt = new SignedJWT(
                new JWSHeader(JWSAlgorithm.HS256), (plan == null ? claims : claims.claim("plan", plan)).build());
        try {
            jwt.sign(new MACSigner(SECRET));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }
}
