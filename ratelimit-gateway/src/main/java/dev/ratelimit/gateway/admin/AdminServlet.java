package dev.ratelimit.gateway.admin;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.ApiKey;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.gateway.config.ManagedKeys.Key;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The admin API, {@code /admin/*} on the management listener only: keys created, listed, read,
 * updated, rotated and revoked by a program ({@link ManagedKeys} keeps them). Every call but
 * {@code GET /admin/openapi.yaml} (the API's description, no secret in it) needs {@code
 * Authorization: Bearer <admin key>}, one of {@code admin.keys}, compared by SHA-256 in constant
 * time; a client key never opens it. Answers are JSON; errors have OpenAI's error shape, with
 * {@code param} naming the offending argument. Each change logs one audit line (no secret in it).
 */
public final class AdminServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final System.Logger AUDIT = System.getLogger("dev.ratelimit.gateway.audit");
    /** The OpenAPI description of this API, served at {@code GET /admin/openapi.yaml}. */
    public static final String OPENAPI = "admin-openapi.yaml";
    /** What a new secret starts with, so that a leaked one is recognised (by a scanner, say). */
    static final String SECRET_PREFIX = "rlk-";

    static final Duration DEFAULT_GRACE = Duration.ofHours(1);
    static final Duration LONGEST_GRACE = Duration.ofDays(30);
    private static final int MAX_BODY_BYTES = 64 * 1024;
    private static final int MAX_METADATA = 50;
    private static final int MAX_TEXT = 256;

    /** Every route this servlet serves, as {@code METHOD /admin/path} with {@code {id}} for a key's id. */
    public static final List<String> ROUTES = List.of(
            "GET /admin/openapi.yaml",
            "GET /admin/keys",
            "POST /admin/keys",
            "GET /admin/keys/{id}",
            "PATCH /admin/keys/{id}",
            "DELETE /admin/keys/{id}",
            "POST /admin/keys/{id}/rotate");

    private static final Set<String> CREATE_FIELDS =
            Set.of("tenant", "tier", "team", "expires-at", "metadata", "windows");
    private static final Set<String> UPDATE_FIELDS = Set.of("tier", "team", "expires-at", "metadata", "windows");
    private static final Set<String> ROTATE_FIELDS = Set.of("grace-seconds");

    private final transient Supplier<GatewayConfig> configs;
    private final transient ManagedKeys keys;
    private final transient SecureRandom random = new SecureRandom();
    private final byte[] description;

    public AdminServlet(Supplier<GatewayConfig> configs, ManagedKeys keys) {
        this.configs = configs;
        this.keys = keys;
        try (InputStream in = AdminServlet.class.getResourceAsStream(OPENAPI)) {
            this.description = Objects.requireNonNull(in, OPENAPI).readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Cache-Control", "no-store");
        String method = request.getMethod();
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        try {
            if (path.equals("/admin/openapi.yaml")) {
                allow(method, "GET");
                OpenAi.write(response, 200, "application/yaml", description);
                return;
            }
            String[] parts = path.split("/", -1); // "", "admin", "keys", id, "rotate"
            if (parts.length < 3 || parts.length > 5 || !parts[2].equals("keys")) {
                throw new BadRequest(
                        404, "unknown_url", null, "Unknown path " + path + ". See GET /admin/openapi.yaml.");
            }
            String who = authenticate(request);
            if (parts.length == 3) {
                allow(method, "GET", "POST");
                if (method.equals("GET")) {
                    list(response);
                } else {
                    create(request, response, who);
                }
                return;
            }
            String id = parts[3];
            if (parts.length == 5) {
                if (!parts[4].equals("rotate")) {
                    throw new BadRequest(
                            404, "unknown_url", null, "Unknown path " + path + ". See GET /admin/openapi.yaml.");
                }
                allow(method, "POST");
                rotate(request, response, existing(id), who);
                return;
            }
            allow(method, "GET", "PATCH", "DELETE");
            Key key = existing(id);
            switch (method) {
                case "GET" -> OpenAi.json(response, 200, key.view(now()));
                case "PATCH" -> update(request, response, key, who);
                default -> revoke(response, key, who);
            }
        } catch (BadRequest refusal) {
            if (refusal.status == 405) {
                response.setHeader("Allow", allowed(path));
            }
            refuse(response, refusal);
        } catch (ManagedKeys.Unavailable e) {
            refuse(
                    response,
                    new BadRequest(
                            503,
                            "store_unavailable",
                            null,
                            "The managed keys' store (Redis) cannot be reached; nothing was changed (unless Redis"
                                    + " made the change and its answer was lost: read the key to know). Try again."));
        }
    }

    /** The methods a path allows, for a 405's {@code Allow}. */
    private static String allowed(String path) {
        int depth = path.split("/", -1).length;
        return path.equals("/admin/openapi.yaml")
                ? "GET"
                : depth == 3 ? "GET, POST" : depth == 4 ? "GET, PATCH, DELETE" : "POST";
    }

    private static void allow(String method, String... allowed) throws BadRequest {
        for (String one : allowed) {
            if (one.equals(method)) {
                return;
            }
        }
        throw new BadRequest(
                405,
                "method_not_allowed",
                null,
                method + " is not allowed here; allowed: " + String.join(", ", allowed));
    }

    /** The admin key's digest prefix, for the audit line; a missing, unknown or client key is refused. */
    private String authenticate(HttpServletRequest request) throws BadRequest {
        List<byte[]> admins = configs.get().admin().keys();
        if (admins.isEmpty()) {
            throw new BadRequest(
                    401,
                    "admin_api_disabled",
                    null,
                    "The admin API has no key configured: add admin.keys to the gateway's configuration.");
        }
        String header = request.getHeader("Authorization");
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw new BadRequest(401, "invalid_admin_key", null, "Send 'Authorization: Bearer <admin key>'.");
        }
        byte[] digest = GatewayConfig.sha256(header.substring(7).trim());
        boolean found = false;
        for (byte[] admin : admins) { // every key is compared, whatever matched
            found |= MessageDigest.isEqual(admin, digest);
        }
        if (!found) {
            throw new BadRequest(401, "invalid_admin_key", null, "Incorrect admin key.");
        }
        return "sha256:" + HexFormat.of().formatHex(digest, 0, 4);
    }

    private void list(HttpServletResponse response) throws IOException {
        Instant now = now();
        ObjectNode body = OpenAi.JSON.createObjectNode();
        body.put("object", "list");
        for (Key key : keys.list()) {
            body.withArray("data").add(key.view(now));
        }
        if (!body.has("data")) {
            body.putArray("data");
        }
        OpenAi.json(response, 200, body);
    }

    private void create(HttpServletRequest request, HttpServletResponse response, String who)
            throws IOException, BadRequest {
        ObjectNode body = body(request, CREATE_FIELDS, true);
        GatewayConfig config = configs.get();
        String tenant = tenant(body.get("tenant"));
        String tier = tier(body.get("tier"), config);
        String team = team(body.get("team"), config);
        Instant now = now();
        Instant expiresAt = expiresAt(body.get("expires-at"), now);
        Map<String, String> metadata = metadata(body.get("metadata"));
        Map<String, String> windows = windows(body.get("windows"));
        consistent(config, tenant, tier, team, null);
        String secret = secret();
        Key key = new Key(
                id(),
                tenant,
                tier,
                team,
                expiresAt,
                metadata,
                windows,
                now,
                now,
                ManagedKeys.hex(GatewayConfig.sha256(secret)),
                null,
                null);
        keys.put(key);
        audit("create", key, who, "");
        response.setHeader("Location", "/admin/keys/" + key.id());
        OpenAi.json(response, 201, withSecret(key.view(now), secret));
    }

    private void update(HttpServletRequest request, HttpServletResponse response, Key key, String who)
            throws IOException, BadRequest {
        ObjectNode body = body(request, UPDATE_FIELDS, false);
        GatewayConfig config = configs.get();
        Instant now = now();
        String tier = body.has("tier") ? tier(body.get("tier"), config) : key.tier();
        String team = body.has("team") ? team(body.get("team"), config) : key.team();
        Instant expiresAt = body.has("expires-at") ? expiresAt(body.get("expires-at"), now) : key.expiresAt();
        Map<String, String> metadata = body.has("metadata") ? metadata(body.get("metadata")) : key.metadata();
        Map<String, String> windows = body.has("windows") ? windows(body.get("windows")) : key.windows();
        consistent(config, key.tenant(), tier, team, key.id());
        Key updated = new Key(
                key.id(),
                key.tenant(),
                tier,
                team,
                expiresAt,
                metadata,
                windows,
                key.created(),
                now,
                key.sha256(),
                key.previousSha256(),
                key.previousUntil());
        keys.put(updated);
        audit("update", updated, who, " fields=" + fieldNames(body));
        OpenAi.json(response, 200, updated.view(now));
    }

    private void rotate(HttpServletRequest request, HttpServletResponse response, Key key, String who)
            throws IOException, BadRequest {
        ObjectNode body = body(request, ROTATE_FIELDS, false);
        Duration grace = DEFAULT_GRACE;
        JsonNode seconds = body.get("grace-seconds");
        if (seconds != null) {
            if (!seconds.isIntegralNumber() || seconds.asLong() < 0 || seconds.asLong() > LONGEST_GRACE.toSeconds()) {
                throw BadRequest.invalid(
                        "grace-seconds",
                        "grace-seconds: a whole number of seconds from 0 to " + LONGEST_GRACE.toSeconds()
                                + " (30 days), was " + seconds);
            }
            grace = Duration.ofSeconds(seconds.asLong());
        }
        Instant now = now();
        String secret = secret();
        boolean graceful = !grace.isZero();
        Key rotated = new Key(
                key.id(),
                key.tenant(),
                key.tier(),
                key.team(),
                key.expiresAt(),
                key.metadata(),
                key.windows(),
                key.created(),
                now,
                ManagedKeys.hex(GatewayConfig.sha256(secret)),
                graceful ? key.sha256() : null,
                graceful ? now.plus(grace) : null);
        keys.put(rotated);
        audit("rotate", rotated, who, " grace-seconds=" + grace.toSeconds());
        OpenAi.json(response, 200, withSecret(rotated.view(now), secret));
    }

    private void revoke(HttpServletResponse response, Key key, String who) throws IOException {
        keys.remove(key.id());
        audit("revoke", key, who, "");
        ObjectNode body = OpenAi.JSON.createObjectNode();
        body.put("id", key.id());
        body.put("revoked", true);
        OpenAi.json(response, 200, body);
    }

    private Key existing(String id) throws BadRequest {
        Key key = id.isEmpty() ? null : keys.get(id);
        if (key == null) {
            throw new BadRequest(404, "key_not_found", "id", "No managed key has the id '" + printable(id) + "'.");
        }
        return key;
    }

    /** The request's JSON object, with only {@code allowed} fields; an empty body is {} unless one is required. */
    private static ObjectNode body(HttpServletRequest request, Set<String> allowed, boolean required)
            throws IOException, BadRequest {
        byte[] bytes = request.getInputStream().readNBytes(MAX_BODY_BYTES + 1);
        if (bytes.length > MAX_BODY_BYTES) {
            throw new BadRequest(
                    413, "request_too_large", null, "The body is larger than " + MAX_BODY_BYTES + " bytes.");
        }
        if (bytes.length == 0 && !required) {
            return OpenAi.JSON.createObjectNode();
        }
        JsonNode json;
        try {
            json = OpenAi.JSON.readTree(bytes);
        } catch (JacksonException e) {
            throw new BadRequest(400, "invalid_json", null, "The body is not valid JSON.");
        }
        if (!(json instanceof ObjectNode object)) {
            throw new BadRequest(400, "invalid_json", null, "The body must be a JSON object.");
        }
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw BadRequest.invalid(
                        printable(name),
                        "Unknown field '" + printable(name) + "'; known fields: "
                                + allowed.stream().sorted().toList());
            }
        }
        return object;
    }

    private static String tenant(@Nullable JsonNode value) throws BadRequest {
        String tenant = text("tenant", value, true);
        if (tenant == null || tenant.isBlank() || !tenant.equals(tenant.strip())) {
            throw BadRequest.invalid("tenant", "tenant: required, a name without leading or trailing spaces");
        }
        // as for a tenant of the file: the servlet filter keeps "ip:" ids for anonymous callers
        if (tenant.startsWith("ip:") || tenant.startsWith("\\")) {
            throw BadRequest.invalid("tenant", "tenant: must not start with 'ip:' or '\\'");
        }
        return tenant;
    }

    private static String tier(@Nullable JsonNode value, GatewayConfig config) throws BadRequest {
        String tier = text("tier", value, true);
        if (tier == null || !config.tiers().containsKey(tier)) {
            throw BadRequest.invalid(
                    "tier",
                    "tier: required, one of the tiers " + config.tiers().keySet() + ", was "
                            + (tier == null ? "missing" : "'" + printable(tier) + "'"));
        }
        return tier;
    }

    private static @Nullable String team(@Nullable JsonNode value, GatewayConfig config) throws BadRequest {
        String team = text("team", value, false);
        if (team != null && !config.spending().teams().containsKey(team)) {
            throw BadRequest.invalid(
                    "team",
                    "team: one of the teams " + config.spending().teams().keySet() + " or null, was '" + printable(team)
                            + "'");
        }
        return team;
    }

    private static @Nullable Instant expiresAt(@Nullable JsonNode value, Instant now) throws BadRequest {
        String text = text("expires-at", value, false);
        if (text == null) {
            return null;
        }
        Instant at;
        try {
            at = OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            throw BadRequest.invalid(
                    "expires-at",
                    "expires-at: an ISO-8601 time with its offset such as 2030-01-31T00:00:00Z, or null, was '"
                            + printable(text) + "'");
        }
        if (!at.isAfter(now)) {
            throw BadRequest.invalid("expires-at", "expires-at: must be in the future (now is " + now + ")");
        }
        return at;
    }

    /**
     * A key's own windows: an object of window name to a window in the tiers' syntax ({@code 10/1m},
     * {@code $20/month}, a trailing {@code shadow}), checked as a tier's are; {@code null} or {@code
     * {}} for none.
     */
    private static Map<String, String> windows(@Nullable JsonNode value) throws BadRequest {
        Map<String, String> windows = new LinkedHashMap<>();
        if (value == null || value.isNull()) {
            return windows;
        }
        if (!value.isObject() || value.size() > MAX_METADATA) {
            throw BadRequest.invalid(
                    "windows",
                    "windows: an object of at most " + MAX_METADATA
                            + " windows, name to limit such as {\"rpm\": \"10/1m\"}, or null");
        }
        List<dev.ratelimit.api.Window> parsed = new java.util.ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> entries = value.fields(); entries.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = entries.next();
            String name = entry.getKey();
            String field = "windows." + printable(name);
            if (!entry.getValue().isTextual() || name.isBlank() || name.length() > MAX_TEXT) {
                throw BadRequest.invalid(field, field + ": a limit such as \"10/1m\" or \"$20/month\"");
            }
            try {
                parsed.add(dev.ratelimit.api.TierPolicy.parseWindow(
                        name, entry.getValue().asText()));
            } catch (IllegalArgumentException e) {
                throw BadRequest.invalid(field, field + ": " + e.getMessage());
            }
            windows.put(name, entry.getValue().asText().strip());
        }
        if (!parsed.isEmpty()) {
            try {
                new dev.ratelimit.api.SharedBudget("key:check", parsed);
            } catch (IllegalArgumentException e) {
                throw BadRequest.invalid("windows", "windows: " + e.getMessage());
            }
        }
        return windows;
    }

    private static Map<String, String> metadata(@Nullable JsonNode value) throws BadRequest {
        Map<String, String> metadata = new LinkedHashMap<>();
        if (value == null || value.isNull()) {
            return metadata;
        }
        if (!value.isObject() || value.size() > MAX_METADATA) {
            throw BadRequest.invalid(
                    "metadata", "metadata: an object of at most " + MAX_METADATA + " string values, or null");
        }
        for (Iterator<Map.Entry<String, JsonNode>> entries = value.fields(); entries.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = entries.next();
            String name = entry.getKey();
            if (!entry.getValue().isTextual()
                    || name.length() > MAX_TEXT
                    || entry.getValue().asText().length() > MAX_TEXT) {
                throw BadRequest.invalid(
                        "metadata",
                        "metadata." + printable(name) + ": a string of at most " + MAX_TEXT + " characters");
            }
            metadata.put(name, entry.getValue().asText());
        }
        return metadata;
    }

    private static @Nullable String text(String field, @Nullable JsonNode value, boolean required) throws BadRequest {
        if (value == null || value.isNull()) {
            if (required) {
                throw BadRequest.missing(field, field + ": required");
            }
            return null;
        }
        if (!value.isTextual() || value.asText().length() > MAX_TEXT) {
            throw BadRequest.invalid(field, field + ": a string of at most " + MAX_TEXT + " characters");
        }
        return value.asText();
    }

    /**
     * A tenant has one tier and one team, whichever of its keys (in the file or managed) says so:
     * its budgets are one tier's windows.
     */
    private void consistent(
            GatewayConfig config, String tenant, String tier, @Nullable String team, @Nullable String except)
            throws BadRequest {
        for (ApiKey key : config.keys()) {
            if (key.tenant().equals(tenant)) {
                agree(
                        tenant,
                        tier,
                        team,
                        key.tier().name(),
                        key.team() == null ? null : key.team().name(),
                        "a key of the configuration file");
            }
        }
        for (Key key : keys.cached()) {
            if (key.tenant().equals(tenant) && !key.id().equals(except)) {
                agree(tenant, tier, team, key.tier(), key.team(), "the managed key '" + key.id() + "'");
            }
        }
    }

    private static void agree(
            String tenant,
            String tier,
            @Nullable String team,
            String otherTier,
            @Nullable String otherTeam,
            String other)
            throws BadRequest {
        if (!tier.equals(otherTier)) {
            throw BadRequest.invalid(
                    "tier",
                    "tier: tenant '" + tenant + "' has tier '" + otherTier + "' by " + other
                            + "; a tenant has one tier");
        }
        if (!Objects.equals(team, otherTeam)) {
            throw BadRequest.invalid(
                    "team",
                    "team: tenant '" + tenant + "' is "
                            + (otherTeam == null ? "in no team" : "in team '" + otherTeam + "'") + " by " + other
                            + "; a tenant has one team");
        }
    }

    private String secret() {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private String id() {
        byte[] bytes = new byte[8];
        random.nextBytes(bytes);
        return "key-" + HexFormat.of().formatHex(bytes);
    }

    private static ObjectNode withSecret(ObjectNode view, String secret) {
        ObjectNode body = OpenAi.JSON.createObjectNode();
        body.put("id", view.get("id").asText());
        body.put("key", secret);
        body.setAll(view);
        return body;
    }

    private Instant now() {
        return keys.clock().instant();
    }

    private static List<String> fieldNames(ObjectNode body) {
        List<String> names = new ArrayList<>();
        body.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** One line per change, never a secret: what, which key, whose budgets, and which admin key did it. */
    private static void audit(String action, Key key, String who, String more) {
        AUDIT.log(
                System.Logger.Level.INFO,
                "admin-keys audit: action={0} id={1} tenant={2} tier={3} team={4} by={5}{6}",
                action,
                key.id(),
                printable(key.tenant()),
                key.tier(),
                key.team() == null ? "-" : key.team(),
                who,
                more);
    }

    /** A value for a message or a log line: control characters replaced, long values cut. */
    private static String printable(String value) {
        String cut = value.length() > 64 ? value.substring(0, 64) + "..." : value;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }

    private static void refuse(HttpServletResponse response, BadRequest refusal) throws IOException {
        if (refusal.status == 401) {
            response.setHeader("WWW-Authenticate", "Bearer");
        }
        String type = refusal.status == 503 ? "server_error" : "invalid_request_error";
        OpenAi.json(
                response,
                refusal.status,
                OpenAi.errorBody(type, refusal.code, refusal.param, String.valueOf(refusal.getMessage())));
    }
}
