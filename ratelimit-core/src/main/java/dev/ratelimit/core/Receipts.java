package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.FailurePolicy;
import dev.ratelimit.api.Window;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;

/**
 * The text of a reservation's receipt ({@link dev.ratelimit.api.Reservation#receipt()}): its
 * estimate, and for each store call that admitted it the entry id, the time the store recorded it
 * at and the scopes with their windows, everything a settlement names. Self-contained, so a
 * reservation is settled against the windows it was made in, whatever the configuration says by
 * then. Names are URL-encoded, which leaves the separators ({@code ' '}, {@code ','}, {@code '!'},
 * {@code '~'}, {@code '='}) free.
 */
final class Receipts {

    private static final String VERSION = "r1";
    private static final String NONE = "-";

    private Receipts() {}

    /** A receipt read back: the estimate and one request (without a lease) per store call. */
    record Read(Amounts estimate, List<StoreRequest> requests, List<Long> reservedAt) {}

    static String write(Amounts estimate, List<HeldReservation.Part> parts) {
        StringBuilder text = new StringBuilder(VERSION).append(' ');
        List<String> amounts = new ArrayList<>();
        for (Window.Unit unit : estimate.units()) {
            amounts.add(encode(unit.name()) + "=" + estimate.get(unit));
        }
        text.append(amounts.isEmpty() ? NONE : String.join(",", amounts));
        for (HeldReservation.Part part : parts) {
            StoreRequest request = part.request();
            StringBuilder scopes = new StringBuilder();
            for (StoreRequest.Scope scope : request.scopes()) {
                if (scope.windows().isEmpty()) {
                    continue; // a scope that held only the lease: nothing to settle once the lease lapsed
                }
                scopes.append(',')
                        .append(scope.shared() ? 's' : 'u')
                        .append('!')
                        .append(encode(scope.subject()));
                for (Window window : scope.windows()) {
                    scopes.append('!').append(window(window));
                }
            }
            if (scopes.length() > 0) {
                text.append(' ')
                        .append(encode(request.entryId()))
                        .append(',')
                        .append(part.evaluation().nowMillis())
                        .append(scopes);
            }
        }
        return text.toString();
    }

    private static String window(Window window) {
        Window.Calendar calendar = window.calendar();
        FailurePolicy policy = window.failurePolicy();
        return String.join(
                "~",
                encode(window.name()),
                Long.toString(window.limit()),
                Long.toString(window.length().toMillis()),
                encode(window.unit().name()),
                Long.toString(window.precision().toMillis()),
                policy == null ? NONE : policy.name(),
                calendar == null ? NONE : calendar.period().name(),
                calendar == null ? NONE : encode(calendar.zone().getId()),
                window.mode().name());
    }

    /**
     * Reads a receipt {@link #write} wrote.
     *
     * @throws IllegalArgumentException when the text is not such a receipt
     */
    static Read read(String receipt) {
        try {
            String[] fields = receipt.split(" ");
            if (fields.length < 3 || !fields[0].equals(VERSION)) {
                throw new IllegalArgumentException("not a receipt of this version");
            }
            Amounts estimate = Amounts.none();
            if (!fields[1].equals(NONE)) {
                for (String amount : fields[1].split(",")) {
                    String[] pair = amount.split("=");
                    estimate = estimate.and(Window.Unit.of(decode(pair[0])), Long.parseLong(pair[1]));
                }
            }
            List<StoreRequest> requests = new ArrayList<>();
            List<Long> times = new ArrayList<>();
            for (int i = 2; i < fields.length; i++) {
                String[] part = fields[i].split(",");
                String entryId = decode(part[0]);
                long reservedAt = Long.parseLong(part[1]);
                List<StoreRequest.Scope> scopes = new ArrayList<>();
                for (int s = 2; s < part.length; s++) {
                    String[] scope = part[s].split("!");
                    List<Window> windows = new ArrayList<>();
                    for (int w = 2; w < scope.length; w++) {
                        windows.add(window(scope[w].split("~")));
                    }
                    String subject = decode(scope[1]);
                    scopes.add(
                            scope[0].equals("s")
                                    ? StoreRequest.Scope.shared(subject, windows)
                                    : StoreRequest.Scope.user(subject, windows));
                }
                requests.add(new StoreRequest(scopes, estimate, entryId, reservedAt, null));
                times.add(reservedAt);
            }
            return new Read(estimate, List.copyOf(requests), List.copyOf(times));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("receipt is not one a reservation gave: " + e.getMessage(), e);
        }
    }

    private static Window window(String[] fields) {
        Window.Calendar calendar = fields[6].equals(NONE)
                ? null
                : new Window.Calendar(CalendarPeriod.valueOf(fields[6]), ZoneId.of(decode(fields[7])));
        return new Window(
                decode(fields[0]),
                Long.parseLong(fields[1]),
                Duration.ofMillis(Long.parseLong(fields[2])),
                Window.Unit.of(decode(fields[3])),
                Duration.ofMillis(Long.parseLong(fields[4])),
                fields[5].equals(NONE) ? null : FailurePolicy.valueOf(fields[5]),
                calendar,
                Window.Mode.valueOf(fields[8]));
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
