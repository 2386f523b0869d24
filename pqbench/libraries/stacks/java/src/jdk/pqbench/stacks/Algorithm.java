package pqbench.stacks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One algorithm as an implementation serves it. The same methods answer the correctness
 * requests and run inside the timed loops, so the code that passes pqbench's known-answer and
 * interoperability checks is the code that is timed. A method left as it is here is an
 * operation the library does not offer.
 */
public abstract class Algorithm {
    /** The protocol's families; each fixes its operations. */
    public enum Kind {
        KEM("kem", "keygen", "encaps", "decaps"),
        SIGNATURE("signature", "keygen", "sign", "verify"),
        AGREEMENT("agreement", "keygen", "derive");

        public final String label;
        public final List<String> operations;

        Kind(String label, String... operations) {
            this.label = label;
            this.operations = List.of(operations);
        }
    }

    /** A key pair: the secret as the library holds it, the public key's standard encoding
     * (null where the library cannot compute it from an imported secret). */
    public static final class Key {
        public final Object secret;
        public final byte[] publicKey;

        public Key(Object secret, byte[] publicKey) {
            this.secret = secret;
            this.publicKey = publicKey;
        }
    }

    /** A ciphertext and the shared secret it carries. */
    public static final class Encapsulated {
        public final byte[] ciphertext;
        public final byte[] sharedSecret;

        public Encapsulated(byte[] ciphertext, byte[] sharedSecret) {
            this.ciphertext = ciphertext;
            this.sharedSecret = sharedSecret;
        }
    }

    /** The library lacks what was asked: the protocol's problem reply. */
    public static final class NotOffered extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public NotOffered(String reason) {
            super(reason);
        }
    }

    /** The request was malformed: the protocol's error reply. */
    public static final class BadInput extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public BadInput(String message) {
            super(message);
        }
    }

    public final String name;
    public final Kind kind;
    /** Which library serves it: a key of the hello's libraries. */
    public final String library;
    /** The CPU code path the library takes here. */
    public String codePath = "unknown";
    public final List<String> features = new ArrayList<>();
    public final Map<String, Integer> sizes = new LinkedHashMap<>();
    /** How sign without "deterministic" signs: hedged, randomized or deterministic. */
    public String signing;
    /** How the secret key is held while timed (the protocol's key_form). */
    public String keyForm = "object";
    /** Where the operation's randomness comes from (free text). */
    public String randomness;

    protected Algorithm(String name, Kind kind, String library) {
        this.name = name;
        this.kind = kind;
        this.library = library;
    }

    public boolean has(String feature) {
        return features.contains(feature);
    }

    public List<String> features() {
        return Collections.unmodifiableList(features);
    }

    /** A key pair, from {@code seed} when it is not null (where seeded_keygen is listed). */
    public abstract Key keygen(byte[] seed) throws Exception;

    /** A secret key in the library's own encoding. */
    public Key importSecret(byte[] secret) throws Exception {
        throw new NotOffered(name + " in " + library + " imports no secret key");
    }

    public Encapsulated encaps(byte[] publicKey, byte[] random) throws Exception {
        throw new NotOffered(name + " has no encaps");
    }

    public byte[] decaps(Object secret, byte[] ciphertext) throws Exception {
        throw new NotOffered(name + " has no decaps");
    }

    public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic)
            throws Exception {
        throw new NotOffered(name + " has no sign");
    }

    /** False for a wrong or malformed signature; an exception for a public key that cannot
     * be decoded. */
    public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature)
            throws Exception {
        throw new NotOffered(name + " has no verify");
    }

    public byte[] derive(Object secret, byte[] peer) throws Exception {
        throw new NotOffered(name + " has no derive");
    }

    /** Refuses a byte string of the wrong size. */
    public static void need(String what, byte[] value, int size) {
        if (value.length != size) {
            throw new BadInput(what + " must be " + size + " bytes, got " + value.length);
        }
    }

    /** Refuses a context where the algorithm takes none. */
    protected void noContext(byte[] context) {
        if (context != null && context.length != 0) {
            throw new NotOffered(name + " in " + library + " takes no context");
        }
    }
}
