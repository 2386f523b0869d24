package pqbench.stacks;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * pqbench's JVM stack worker: one program serving two implementations, the JDK's own
 * providers ({@code --impl java}) and BouncyCastle ({@code --impl bouncycastle}), over
 * pqbench's stack worker protocol version 1 (docs/stacks.md): one JSON object per line on
 * stdin and stdout, a hello first, exactly one reply per request, exit 0 on quit or end of
 * input. Nothing but protocol lines is written to stdout (System.out is pointed at stderr);
 * diagnostics go to stderr. This class uses only the JDK: the BouncyCastle implementation is
 * loaded by name, so the {@code java} build needs no BouncyCastle jar.
 */
public final class Worker {
    static final int PROTOCOL = 1;
    /** The protocol's longest line, its newline included. */
    static final int MAX_LINE = 1 << 20;
    private static final String BOUNCYCASTLE = "pqbench.stacks.bc.BouncyCastle";

    private final String implementationName;
    private final Implementation implementation;
    private final Map<String, Algorithm> algorithms = new LinkedHashMap<>();
    private final Map<String, Handle> handles = new HashMap<>();
    private final Rows rows;
    private int nextHandle;

    private static final class Handle {
        final Algorithm algorithm;
        final Object secret;

        Handle(Algorithm algorithm, Object secret) {
            this.algorithm = algorithm;
            this.secret = secret;
        }
    }

    Worker(String implementationName, Implementation implementation) {
        this.implementationName = implementationName;
        this.implementation = implementation;
        for (Algorithm a : implementation.algorithms()) {
            algorithms.put(a.name, a);
        }
        this.rows = new Rows(new Clocks());
    }

    public static void main(String[] args) throws IOException {
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        System.setOut(System.err);
        String name = implementationArgument(args);
        Implementation implementation;
        try {
            implementation = load(name);
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            System.err.println("pqbench JVM worker: cannot load implementation " + name + ": " + e);
            System.exit(2);
            return;
        }
        Worker worker = new Worker(name, implementation);
        send(out, worker.hello());
        InputStream in = new BufferedInputStream(new FileInputStream(FileDescriptor.in), 1 << 16);
        while (true) {
            byte[] line;
            try {
                line = readLine(in);
            } catch (LineTooLong e) {
                send(out, error("request line longer than " + MAX_LINE + " bytes"));
                continue;
            }
            if (line == null) {
                return;
            }
            Map<String, Object> reply = worker.handle(line);
            if (reply == null) {
                return; // quit
            }
            send(out, reply);
        }
    }

    private static String implementationArgument(String[] args) {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--impl") && i + 1 < args.length) {
                return args[i + 1];
            }
            if (args[i].startsWith("--impl=")) {
                return args[i].substring("--impl=".length());
            }
        }
        System.err.println("usage: java pqbench.stacks.Worker --impl java|bouncycastle");
        System.exit(2);
        return null;
    }

    private static Implementation load(String name) throws ReflectiveOperationException {
        switch (name) {
            case "java":
                return new JdkProviders();
            case "bouncycastle":
                return (Implementation) Class.forName(BOUNCYCASTLE).getDeclaredConstructor().newInstance();
            default:
                throw new IllegalArgumentException("unknown implementation (java, bouncycastle)");
        }
    }

    private static void send(OutputStream out, Map<String, Object> reply) {
        try {
            out.write(Json.write(reply).getBytes(StandardCharsets.US_ASCII));
            out.write('\n');
            out.flush();
        } catch (IOException gone) {
            // The controller is gone: nobody is left to answer.
            System.exit(0);
        }
    }

    private static final class LineTooLong extends Exception {
        private static final long serialVersionUID = 1L;
    }

    /** The next line without its newline, null at end of input. A longer line than the
     * protocol allows is read to its end, so the next request starts in the right place. */
    static byte[] readLine(InputStream in) throws IOException, LineTooLong {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        boolean tooLong = false;
        int count = 0;
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (tooLong) {
                    throw new LineTooLong();
                }
                return count == 0 ? null : line.toByteArray();
            }
            if (b == '\n') {
                if (tooLong) {
                    throw new LineTooLong();
                }
                return line.toByteArray();
            }
            count++;
            if (count >= MAX_LINE) {
                tooLong = true;
                line.reset();
            } else if (!tooLong) {
                line.write(b);
            }
        }
    }

    static Map<String, Object> error(String message) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", "error");
        reply.put("message", message == null ? "unknown failure" : message);
        return reply;
    }

    static Map<String, Object> notOffered(String reason) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", "problem");
        reply.put("kind", "not_offered");
        reply.put("reason", reason);
        return reply;
    }

    Map<String, Object> hello() {
        Map<String, Object> offers = new LinkedHashMap<>();
        Map<String, Object> features = new LinkedHashMap<>();
        Map<String, Object> codePaths = new LinkedHashMap<>();
        Map<String, Object> libraryOf = new LinkedHashMap<>();
        for (Algorithm a : algorithms.values()) {
            offers.put(a.name, a.kind.operations);
            features.put(a.name, a.features());
            codePaths.put(a.name, a.codePath);
            libraryOf.put(a.name, a.library);
        }
        Map<String, Object> hello = new LinkedHashMap<>();
        hello.put("type", "hello");
        hello.put("protocol", PROTOCOL);
        hello.put("implementation", implementationName);
        hello.put("runtime", JvmRuntime.describe());
        hello.put("libraries", new LinkedHashMap<>(implementation.libraries()));
        hello.put("offers", offers);
        hello.put("features", features);
        hello.put("code_paths", codePaths);
        hello.put("library_of", libraryOf);
        hello.put("needs", implementation.needs());
        hello.put("process_clock", rows.clocks.processClock());
        hello.put("pid", ProcessHandle.current().pid());
        return hello;
    }

    /** The reply to one request line; null for quit. Nothing a request holds ends the worker:
     * every failure becomes an error reply. */
    Map<String, Object> handle(byte[] line) {
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(line)).toString();
            if (text.trim().isEmpty()) {
                return error("empty request line");
            }
            Object parsed = Json.parse(text);
            if (!(parsed instanceof Map)) {
                return error("a request must be a JSON object");
            }
            @SuppressWarnings("unchecked")
            Request request = new Request((Map<String, Object>) parsed);
            String type = request.string("type");
            if (type == null) {
                return error("request has no \"type\"");
            }
            if (type.equals("quit")) {
                return null;
            }
            return dispatch(type, request);
        } catch (CharacterCodingException e) {
            return error("request line is not UTF-8");
        } catch (Json.Malformed e) {
            return error(e.getMessage());
        } catch (Algorithm.NotOffered e) {
            return notOffered(e.getMessage());
        } catch (Algorithm.BadInput e) {
            return error(e.getMessage());
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            return error(describe(e));
        }
    }

    /** A name from a request, quoted for a message (the reply's JSON escapes it). */
    static String quoted(String s) {
        return "\"" + s + "\"";
    }

    static String describe(Throwable e) {
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    private Map<String, Object> dispatch(String type, Request request) throws Exception {
        switch (type) {
            case "run":
                return rows.run(request);
            case "keygen":
            case "import":
            case "encaps":
            case "decaps":
            case "sign":
            case "verify":
            case "derive":
            case "prepare":
                break;
            default:
                return error("unknown request type " + quoted(type));
        }
        Algorithm a = algorithm(request.string("alg"));
        switch (type) {
            case "keygen": {
                byte[] seed = request.hex("seed", false);
                if (seed != null && !a.has("seeded_keygen")) {
                    throw new Algorithm.NotOffered(a.name + " in " + a.library + " has no seeded key generation");
                }
                return keyReply(a, a.keygen(seed));
            }
            case "import":
                return keyReply(a, a.importSecret(request.hex("secret", true)));
            case "encaps": {
                needKind(a, Algorithm.Kind.KEM, type);
                byte[] publicKey = request.hex("public", true);
                byte[] random = request.hex("random", false);
                if (random != null && !a.has("derandomized_encaps")) {
                    throw new Algorithm.NotOffered(a.name + " in " + a.library + " has no derandomized encapsulation");
                }
                Algorithm.Encapsulated e = a.encaps(publicKey, random);
                Map<String, Object> reply = reply("encapsulated");
                reply.put("ciphertext", Hex.encode(e.ciphertext));
                reply.put("shared_secret", Hex.encode(e.sharedSecret));
                return reply;
            }
            case "decaps": {
                needKind(a, Algorithm.Kind.KEM, type);
                Object secret = secret(a, request);
                Map<String, Object> reply = reply("decapsulated");
                reply.put("shared_secret", Hex.encode(a.decaps(secret, request.hex("ciphertext", true))));
                return reply;
            }
            case "sign": {
                needKind(a, Algorithm.Kind.SIGNATURE, type);
                Object secret = secret(a, request);
                byte[] message = request.hex("message", true);
                byte[] context = request.hex("context", false);
                boolean deterministic = Boolean.TRUE.equals(request.bool("deterministic"));
                if (deterministic && !"deterministic".equals(a.signing) && !a.has("deterministic_sign")) {
                    throw new Algorithm.NotOffered(a.name + " in " + a.library + " has no deterministic signing");
                }
                Map<String, Object> reply = reply("signed");
                reply.put("signature", Hex.encode(a.sign(secret, message, context, deterministic)));
                return reply;
            }
            case "verify": {
                needKind(a, Algorithm.Kind.SIGNATURE, type);
                byte[] publicKey = request.hex("public", true);
                byte[] message = request.hex("message", true);
                byte[] context = request.hex("context", false);
                String signatureHex = request.string("signature");
                if (signatureHex == null) {
                    throw new Algorithm.BadInput("request has no \"signature\"");
                }
                // A signature that is not even hex is a malformed signature: it verifies false.
                byte[] signature = Hex.decodeOrNull(signatureHex);
                boolean valid = signature != null && a.verify(publicKey, message, context, signature);
                Map<String, Object> reply = reply("verified");
                reply.put("valid", valid);
                return reply;
            }
            case "derive": {
                needKind(a, Algorithm.Kind.AGREEMENT, type);
                Object secret = secret(a, request);
                byte[] peer = request.hex("peer", true);
                byte[] shared;
                try {
                    shared = a.derive(secret, peer);
                } catch (Algorithm.NotOffered | Algorithm.BadInput e) {
                    throw e;
                } catch (Exception e) {
                    throw new Algorithm.BadInput(a.name + " derive refused the peer key: " + describe(e));
                }
                Map<String, Object> reply = reply("derived");
                reply.put("shared_secret", Hex.encode(shared));
                return reply;
            }
            default:
                return rows.prepare(a, request);
        }
    }

    private Algorithm algorithm(String name) {
        if (name == null) {
            throw new Algorithm.BadInput("request has no \"alg\"");
        }
        Algorithm a = algorithms.get(name);
        if (a == null) {
            throw new Algorithm.NotOffered("the " + implementationName + " implementation offers no algorithm "
                    + quoted(name) + " on this JVM");
        }
        return a;
    }

    private static void needKind(Algorithm a, Algorithm.Kind kind, String request) {
        if (a.kind != kind) {
            throw new Algorithm.BadInput(a.name + " is a " + a.kind.label + " algorithm; " + request
                    + " needs a " + kind.label);
        }
    }

    private Object secret(Algorithm a, Request request) {
        String name = request.string("key");
        if (name == null) {
            throw new Algorithm.BadInput("request has no \"key\"");
        }
        Handle h = handles.get(name);
        if (h == null) {
            throw new Algorithm.BadInput("no key with handle " + quoted(name));
        }
        if (h.algorithm != a) {
            throw new Algorithm.BadInput("key " + quoted(name) + " is an " + h.algorithm.name + " key, not " + a.name);
        }
        return h.secret;
    }

    private Map<String, Object> keyReply(Algorithm a, Algorithm.Key key) {
        String name = "k" + (++nextHandle);
        handles.put(name, new Handle(a, key.secret));
        Map<String, Object> reply = reply("key");
        reply.put("key", name);
        reply.put("public", key.publicKey == null ? null : Hex.encode(key.publicKey));
        return reply;
    }

    static Map<String, Object> reply(String type) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", type);
        return reply;
    }

    /** Typed access to a request's fields; a field of the wrong JSON type is a bad input. */
    static final class Request {
        final Map<String, Object> fields;

        Request(Map<String, Object> fields) {
            this.fields = fields;
        }

        String string(String key) {
            Object value = fields.get(key);
            if (value == null) {
                return null;
            }
            if (!(value instanceof String)) {
                throw new Algorithm.BadInput("field \"" + key + "\" must be a string");
            }
            return (String) value;
        }

        Boolean bool(String key) {
            Object value = fields.get(key);
            if (value == null) {
                return null;
            }
            if (!(value instanceof Boolean)) {
                throw new Algorithm.BadInput("field \"" + key + "\" must be true or false");
            }
            return (Boolean) value;
        }

        Double number(String key) {
            Object value = fields.get(key);
            if (value == null) {
                return null;
            }
            if (!(value instanceof Number)) {
                throw new Algorithm.BadInput("field \"" + key + "\" must be a number");
            }
            return ((Number) value).doubleValue();
        }

        byte[] hex(String key, boolean required) {
            String value = string(key);
            if (value == null) {
                if (required) {
                    throw new Algorithm.BadInput("request has no \"" + key + "\"");
                }
                return null;
            }
            byte[] bytes = Hex.decodeOrNull(value);
            if (bytes == null) {
                throw new Algorithm.BadInput("field \"" + key + "\" is not hex (" + value.length() + " characters)");
            }
            return bytes;
        }
    }
}
