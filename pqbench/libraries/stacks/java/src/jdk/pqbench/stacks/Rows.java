package pqbench.stacks;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/** Prepared rows and the timed loop (the protocol's prepare and run). */
final class Rows {
    /** A sign or verify row rotates through this many distinct random messages... */
    static final int MESSAGES = 64;
    /** ...of this many bytes. */
    static final int MESSAGE_SIZE = 32;
    /** A batch shorter than this doubles, so the clock is read about once per half a
     * millisecond however fast the operation (pqbench's own loops do the same). */
    static final long TARGET_BATCH_NS = 500_000;
    /** The protocol's longest round. */
    static final double MAX_SECONDS = 600;

    /** One timed call; it returns a byte of its result, folded into {@link #sink}. */
    interface Operation {
        int call() throws Exception;
    }

    private static final class Row {
        final Object name;
        final Operation operation;
        final Map<String, Object> sizes;
        final Map<String, Object> attributes;

        Row(Object name, Operation operation, Map<String, Object> sizes, Map<String, Object> attributes) {
            this.name = name;
            this.operation = operation;
            this.sizes = sizes;
            this.attributes = attributes;
        }
    }

    /** Receives every round's folded result bytes, so no result is dead code. */
    static volatile int sink;

    final Clocks clocks;
    private final Map<String, Row> rows = new HashMap<>();
    private final SecureRandom random = new SecureRandom();

    Rows(Clocks clocks) {
        this.clocks = clocks;
    }

    private static String rowKey(Worker.Request request) {
        Object row = request.fields.get("row");
        if (row == null) {
            throw new Algorithm.BadInput("request has no \"row\"");
        }
        if (!(row instanceof String) && !(row instanceof Number)) {
            throw new Algorithm.BadInput("\"row\" must be a string or a number");
        }
        return Json.write(row);
    }

    Map<String, Object> prepare(Algorithm a, Worker.Request request) throws Exception {
        String key = rowKey(request);
        String operation = request.string("operation");
        if (operation == null) {
            throw new Algorithm.BadInput("request has no \"operation\"");
        }
        if (!a.kind.operations.contains(operation)) {
            for (Algorithm.Kind kind : Algorithm.Kind.values()) {
                if (kind.operations.contains(operation)) {
                    throw new Algorithm.NotOffered(a.name + " has no " + operation + " operation");
                }
            }
            throw new Algorithm.BadInput("unknown operation " + Worker.quoted(operation));
        }
        Row row;
        try {
            row = make(request.fields.get("row"), a, operation);
        } catch (Algorithm.NotOffered | Algorithm.BadInput e) {
            throw e;
        } catch (Exception e) {
            throw new Algorithm.BadInput("preparing " + a.name + " " + operation + ": " + Worker.describe(e));
        }
        rows.put(key, row);
        Map<String, Object> reply = Worker.reply("prepared");
        reply.put("row", row.name);
        reply.put("sizes", row.sizes);
        reply.put("attributes", row.attributes);
        return reply;
    }

    /** Everything the operation needs, made outside the clock, and one untimed check that the
     * operation works on it. */
    private Row make(Object name, Algorithm a, String operation) throws Exception {
        Map<String, Object> sizes = new LinkedHashMap<>(a.sizes);
        Map<String, Object> attributes = new LinkedHashMap<>();
        if (a.randomness != null) {
            attributes.put("randomness", a.randomness);
        }
        if (operation.equals("keygen")) {
            attributes.put("key_form", a.keyForm); // the key the timed call makes
            return new Row(name, () -> a.keygen(null).publicKey[0], sizes, attributes);
        }
        Algorithm.Key key = a.keygen(null);
        byte[] publicKey = key.publicKey;
        Operation call;
        switch (operation) {
            case "encaps":
                attributes.put("public_key_form", "encoded");
                call = () -> {
                    Algorithm.Encapsulated e = a.encaps(publicKey, null);
                    return e.ciphertext[0] ^ e.sharedSecret[0];
                };
                break;
            case "decaps": {
                attributes.put("key_form", a.keyForm);
                Algorithm.Encapsulated e = a.encaps(publicKey, null);
                if (!Arrays.equals(a.decaps(key.secret, e.ciphertext), e.sharedSecret)) {
                    throw new IllegalStateException("decapsulation did not recover the encapsulated secret");
                }
                byte[] ciphertext = e.ciphertext;
                call = () -> a.decaps(key.secret, ciphertext)[0];
                break;
            }
            case "sign":
            case "verify": {
                attributes.put("signing", a.signing);
                attributes.put("messages", MESSAGES);
                sizes.put("message", MESSAGE_SIZE);
                byte[][] messages = new byte[MESSAGES][MESSAGE_SIZE];
                byte[][] signatures = new byte[MESSAGES][];
                for (int i = 0; i < MESSAGES; i++) {
                    random.nextBytes(messages[i]);
                    signatures[i] = a.sign(key.secret, messages[i], null, false);
                    if (!a.verify(publicKey, messages[i], null, signatures[i])) {
                        throw new IllegalStateException("a fresh signature did not verify");
                    }
                }
                int[] next = {0};
                if (operation.equals("sign")) {
                    attributes.put("key_form", a.keyForm);
                    call = () -> {
                        byte[] signature = a.sign(key.secret, messages[next[0]], null, false);
                        next[0] = (next[0] + 1) % MESSAGES;
                        return signature[signature.length - 1];
                    };
                } else {
                    attributes.put("public_key_form", "encoded");
                    call = () -> {
                        int i = next[0];
                        next[0] = (i + 1) % MESSAGES;
                        if (!a.verify(publicKey, messages[i], null, signatures[i])) {
                            throw new IllegalStateException("a prepared signature did not verify");
                        }
                        return 1;
                    };
                }
                break;
            }
            default: { // derive
                attributes.put("key_form", a.keyForm);
                attributes.put("public_key_form", "encoded");
                Algorithm.Key peer = a.keygen(null);
                byte[] ours = a.derive(key.secret, peer.publicKey);
                byte[] theirs = a.derive(peer.secret, publicKey);
                if (!Arrays.equals(ours, theirs)) {
                    throw new IllegalStateException("the two sides did not derive the same secret");
                }
                byte[] peerPublic = peer.publicKey;
                call = () -> a.derive(key.secret, peerPublic)[0];
                break;
            }
        }
        return new Row(name, call, sizes, attributes);
    }

    Map<String, Object> run(Worker.Request request) throws Exception {
        Row row = rows.get(rowKey(request));
        if (row == null) {
            throw new Algorithm.BadInput("no prepared row " + rowKey(request));
        }
        Double seconds = request.number("seconds");
        if (seconds == null) {
            throw new Algorithm.BadInput("request has no \"seconds\"");
        }
        if (!(seconds > 0 && seconds <= MAX_SECONDS)) {
            throw new Algorithm.BadInput("\"seconds\" must be above 0 and at most " + (int) MAX_SECONDS);
        }
        long[] round;
        try {
            round = time(row.operation, seconds);
        } catch (Exception e) {
            throw new Algorithm.BadInput("the operation failed while timed: " + Worker.describe(e));
        }
        Map<String, Object> reply = Worker.reply("round");
        reply.put("row", row.name);
        reply.put("ops", round[0]);
        reply.put("wall_ns", round[1]);
        reply.put("thread_cpu_ns", round[2]);
        reply.put("process_cpu_ns", round[3]);
        return reply;
    }

    /**
     * Calls the operation for at least {@code seconds} of System.nanoTime, in batches that
     * double until one lasts TARGET_BATCH_NS, reading the clock once per batch. The CPU
     * clocks are read nested around the wall clock (process, thread, wall ... wall, thread,
     * process): ops, wall, thread and process nanoseconds.
     */
    private long[] time(Operation operation, double seconds) throws Exception {
        long budget = Math.max((long) (seconds * 1e9), 1L);
        long batch = 1;
        long ops = 0;
        int folded = 0;
        Clocks.Snapshot processStart = clocks.processStart();
        long threadStart = clocks.thread();
        long start = System.nanoTime();
        long now = start;
        while (now - start < budget) {
            long batchStart = now;
            for (long i = 0; i < batch; i++) {
                folded ^= operation.call();
            }
            ops += batch;
            now = System.nanoTime();
            if (now - batchStart < TARGET_BATCH_NS) {
                batch <<= 1;
            }
        }
        long threadEnd = clocks.thread();
        Clocks.Snapshot processEnd = clocks.processEnd();
        sink ^= folded;
        return new long[] {ops, now - start, threadEnd - threadStart, Clocks.between(processStart, processEnd)};
    }
}
