package dev.ratelimit.spring.boot;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/** Signs HS256 tokens that the test applications' resource servers accept: a real JWT path, no IdP. */
public final class TestJwts {

    private static final byte[] SECRET =
            "ratelimit-spring-boot-tests-only-secret-0123456789".getBytes(StandardCharsets.UTF_8);

    private TestJwts() {}

    /** The key the applications' decoders verify with. */
    public static SecretKey key() {
        return new SecretKeySpec(SECRET, "HmacSHA256");
    }

    /** A token for a user with a {@code plan} claim (null: none) and {@code roles} (authorities). */
    public static String token(String subject, String plan, List<String> roles) {
        JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder()
                .subject(subject)
                .issueTime(Date.from(Instant.now()))
                .expirationTime(Date.from(Instant.now().plusSeconds(3600)))
                .claim("roles", roles);
        if (plan != null) {
            claims.claim("plan", plan);
        }
        SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims.build());
        try {
            jwt.sign(new MACSigner(SECRET));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
        return jwt.serialize();
    }

    /** A token with a plan and no roles. */
    public static String token(String subject, String plan) {
        return token(subject, plan, List.of());
    }
}
