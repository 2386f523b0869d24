package pqbench.stacks;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.SignatureException;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.crypto.KeyAgreement;

/**
 * The {@code java} implementation: the JDK's own providers through the JCA, as a Java server
 * calls them. ML-KEM (JEP 496) and ML-DSA (JEP 497) need JDK 24; X25519 and ECDH-P-256 come
 * from KeyAgreement, Ed25519 and ECDSA-P-256 from Signature. An algorithm this JDK lacks is
 * left out of the hello.
 *
 * <p>The JCA takes no seeds. Seeded key generation, derandomized encapsulation and
 * deterministic ML-DSA signing feed the FIPS inputs (d || z, m, xi, rnd = 0^32) to the JDK as
 * its SecureRandom ({@link FixedRandom}), the technique of the JDK's own ACVP tests: if a JDK
 * drew its randomness differently, the known answers would fail rather than pass wrongly.
 * Public keys cross the protocol raw and are decoded inside each timed operation, as a
 * handshake decodes a peer's key share (XECPublicKeySpec and ECPublicKeySpec, as JSSE does;
 * X.509 SubjectPublicKeyInfo for ML-KEM, ML-DSA and Ed25519). JCA engine objects (KEM,
 * Signature, KeyAgreement, KeyFactory) are made once per algorithm and initialised per
 * operation.
 */
public class JdkProviders extends Implementation {
    /** The providers every engine comes from. */
    protected final Jca jca;
    private final String randomness;

    JdkProviders() {
        this(new Jca(null), "the JDK's default SecureRandom (" + new SecureRandom().getAlgorithm() + ")");
    }

    /** The same calls to another provider's engines ({@code bouncycastle}); {@code randomness}
     * says where they draw their randomness from. */
    protected JdkProviders(Jca jca, String randomness) {
        this.jca = jca;
        this.randomness = randomness;
        for (String name : new String[] {"ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"}) {
            offer(name, () -> new MlKem(name));
        }
        for (String name : new String[] {"ML-DSA-44", "ML-DSA-65", "ML-DSA-87"}) {
            offer(name, () -> new MlDsa(name));
        }
        offer("X25519", () -> new Agreement(new X25519Keys(), "X25519", "UseIntPolyIntrinsics"));
        offer("ECDH-P-256", () -> new Agreement(new P256Keys("ECDH-P-256"), "ECDH", "UseIntPolyIntrinsics"));
        // Ed25519 is deterministic by definition; ECDSA draws a random nonce (the JDK has no
        // RFC 6979 mode; a provider may, under its own name) and signs in DER, at most 72
        // bytes.
        offer("Ed25519", () -> new ClassicalSignature(new Ed25519Keys(), "Ed25519", null, "deterministic", 64,
                "UseIntPolyIntrinsics", "UseSHA512Intrinsics"));
        offer("ECDSA-P-256", () -> new ClassicalSignature(new P256Keys("ECDSA-P-256"), "SHA256withECDSA",
                jca.deterministicEcdsa(), "randomized", 72, "UseIntPolyIntrinsics", "UseSHA256Intrinsics"));
        libraries.put("jvm options", JvmRuntime.options());
    }

    private interface Maker {
        Algorithm make() throws Exception;
    }

    /** Adds the algorithm if this JDK has it: one key pair is made to find out. */
    private void offer(String name, Maker maker) {
        try {
            Algorithm a = maker.make();
            a.keygen(null);
            a.randomness = randomness;
            algorithms.add(a);
            libraries.put(a.library, jca.version(a.library));
        } catch (Exception | LinkageError e) {
            System.err.println("pqbench JVM worker: the JDK does not offer " + name + ": " + Worker.describe(e));
        }
    }

    @Override
    public String needs() {
        return "JDK 24 or newer for ML-KEM and ML-DSA (JEP 496, 497), JDK 17 for the rest; this is "
                + JvmRuntime.version();
    }

    /** The HotSpot intrinsic flags that are on, as a code path. They are diagnostic flags,
     * which the JVM shows only when started with -XX:+UnlockDiagnosticVMOptions (it changes
     * nothing else); without it the path is unknown. */
    static String intrinsics(String... flags) {
        List<String> on = new ArrayList<>();
        for (String flag : flags) {
            String value = JvmRuntime.vmFlag(flag);
            if (value == null) {
                return "unknown (HotSpot shows its intrinsic flags only with -XX:+UnlockDiagnosticVMOptions)";
            }
            if (value.equals("true")) {
                on.add(flag);
            }
        }
        return on.isEmpty() ? "Java (C2 JIT), no intrinsics" : "JIT intrinsics (" + String.join(", ", on) + ")";
    }

    /** The provider that serves a key pair generator: the library's name. */
    private String provider(KeyPairGenerator generator) {
        return jca.library(generator.getProvider());
    }

    /** An X.509 SubjectPublicKeyInfo is a fixed header followed by the raw key for these
     * algorithms: the header, learnt from one key the JDK made. */
    private static byte[] spkiHeader(PublicKey key, int rawLength) {
        byte[] encoded = key.getEncoded();
        return Arrays.copyOf(encoded, encoded.length - rawLength);
    }

    private static byte[] raw(PublicKey key, int rawLength) {
        byte[] encoded = key.getEncoded();
        return Arrays.copyOfRange(encoded, encoded.length - rawLength, encoded.length);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** A signature of message by key, with the randomness the signer was made with. */
    private static byte[] signed(Signature signer, PrivateKey key, byte[] message) throws Exception {
        signer.initSign(key);
        signer.update(message);
        return signer.sign();
    }

    /** Whether signature is valid for message under key; a malformed signature is not (the
     * JCA throws SignatureException for it), which the protocol answers with false. */
    private static boolean verifies(Signature verifier, PublicKey key, byte[] message, byte[] signature)
            throws Exception {
        verifier.initVerify(key);
        verifier.update(message);
        try {
            return verifier.verify(signature);
        } catch (SignatureException malformed) {
            return false;
        }
    }

    /** Key generation through the JCA, from a fixed input where seed is not null. */
    private KeyPair generate(String algorithm, String parameterSet, byte[] seed) throws Exception {
        KeyPairGenerator generator = jca.keyPairGenerator(algorithm);
        if (seed != null) {
            FixedRandom fixed = new FixedRandom(seed);
            generator.initialize(new NamedParameterSpec(parameterSet), fixed);
            KeyPair pair = generator.generateKeyPair();
            if (!fixed.exhausted()) {
                throw new IllegalStateException("the provider drew less randomness than the seed holds");
            }
            return pair;
        }
        return generator.generateKeyPair();
    }

    /** The PKCS#8 header before an expanded secret key of {@code size} bytes, where the JDK
     * encodes its private keys that way (JDK 25's default: the key is a DER OCTET STRING,
     * tag 04, two length bytes, right before the key); null where it holds the seed. */
    static byte[] expandedHeader(PrivateKey key, int size) {
        byte[] encoded = key.getEncoded();
        int start = encoded.length - size;
        if (start < 4 || encoded[start - 4] != 0x04 || encoded[start - 3] != (byte) 0x82
                || ((encoded[start - 2] & 0xff) << 8 | (encoded[start - 1] & 0xff)) != size) {
            return null;
        }
        return Arrays.copyOf(encoded, start);
    }

    /** ML-KEM (FIPS 203) from the JDK's provider. Decapsulation makes a Decapsulator for the
     * key each time, as a handshake with a fresh key does (the JDK checks the key there). */
    private final class MlKem extends Algorithm {
        private final int publicSize;
        private final int expandedSize;
        private final byte[] header;
        /** The PKCS#8 header of an expanded key, null where the JDK holds seeds. */
        private final byte[] privateHeader;
        private final KeyFactory factory;
        private final Jca.Kem kem;

        MlKem(String name) throws Exception {
            super(name, Kind.KEM, provider(jca.keyPairGenerator(name)));
            int k = name.equals("ML-KEM-512") ? 2 : name.equals("ML-KEM-768") ? 3 : 4;
            publicSize = 384 * k + 32;
            int ciphertextSize = k == 4 ? 1568 : 32 * (k * 10 + 4);
            expandedSize = 768 * k + 96;
            KeyPair sample = jca.keyPairGenerator(name).generateKeyPair();
            header = spkiHeader(sample.getPublic(), publicSize);
            Jca.KeyForm form = jca.keyForm(sample.getPrivate(), expandedSize, 64);
            privateHeader = form.importHeader;
            factory = jca.keyFactory("ML-KEM");
            kem = jca.kem("ML-KEM");
            codePath = jca.codePath("UseKyberIntrinsics", "UseSHA3Intrinsics");
            features.add("seeded_keygen");
            features.add("derandomized_encaps");
            if (privateHeader != null) {
                features.add("import_expanded");
            }
            keyForm = form.name;
            sizes.put("public_key", publicSize);
            sizes.put("secret_key", form.size);
            sizes.put("ciphertext", ciphertextSize);
            sizes.put("shared_secret", 32);
        }

        @Override
        public Key keygen(byte[] seed) throws Exception {
            if (seed != null) {
                need("seed (d || z)", seed, 64);
            }
            KeyPair pair = generate(name, name, seed);
            return new Key(pair.getPrivate(), raw(pair.getPublic(), publicSize));
        }

        /** The 64-byte seed, or the expanded dk (FIPS 203: dk_PKE || ek || H(ek) || z), whose
         * ek is the public key. */
        @Override
        public Key importSecret(byte[] secret) throws Exception {
            if (secret.length == 64) {
                return keygen(secret);
            }
            if (secret.length != expandedSize) {
                throw new BadInput(name + " secret key must be the 64-byte seed or the " + expandedSize
                        + "-byte dk, got " + secret.length);
            }
            if (privateHeader == null) {
                throw new NotOffered("ML-KEM through this provider's JCA imports no expanded dk here");
            }
            PrivateKey key = factory.generatePrivate(new PKCS8EncodedKeySpec(concat(privateHeader, secret)));
            int start = expandedSize - publicSize - 64;
            return new Key(key, Arrays.copyOfRange(secret, start, start + publicSize));
        }

        @Override
        public Encapsulated encaps(byte[] publicKey, byte[] random) throws Exception {
            need(name + " public key", publicKey, publicSize);
            if (random != null) {
                need("random (m)", random, 32);
            }
            PublicKey key = factory.generatePublic(new X509EncodedKeySpec(concat(header, publicKey)));
            FixedRandom fixed = random == null ? null : new FixedRandom(random);
            byte[][] result = kem.encapsulate(key, fixed);
            if (fixed != null && !fixed.exhausted()) {
                throw new IllegalStateException("the provider drew less randomness than m holds");
            }
            return new Encapsulated(result[0], result[1]);
        }

        @Override
        public byte[] decaps(Object secret, byte[] ciphertext) throws Exception {
            return kem.decapsulate((PrivateKey) secret, ciphertext);
        }
    }

    /** ML-DSA (FIPS 204, pure) from the provider: hedged signing; a context where the
     * provider takes one ({@link Jca#context}). */
    private final class MlDsa extends Algorithm {
        private final int publicSize;
        private final byte[] header;
        private final KeyFactory factory;
        private final Signature signer;
        /** Deterministic signing gets a Signature of its own: a Signature keeps the
         * SecureRandom it was last initialised with. */
        private final Signature deterministicSigner;
        private final Signature verifier;

        MlDsa(String name) throws Exception {
            super(name, Kind.SIGNATURE, provider(jca.keyPairGenerator(name)));
            publicSize = name.equals("ML-DSA-44") ? 1312 : name.equals("ML-DSA-65") ? 1952 : 2592;
            KeyPair sample = jca.keyPairGenerator(name).generateKeyPair();
            header = spkiHeader(sample.getPublic(), publicSize);
            int expandedSize = name.equals("ML-DSA-44") ? 2560 : name.equals("ML-DSA-65") ? 4032 : 4896;
            Jca.KeyForm form = jca.keyForm(sample.getPrivate(), expandedSize, 32);
            keyForm = form.name;
            factory = jca.keyFactory("ML-DSA");
            signer = jca.signature("ML-DSA");
            deterministicSigner = jca.signature("ML-DSA");
            verifier = jca.signature("ML-DSA");
            codePath = jca.codePath("UseDilithiumIntrinsics", "UseSHA3Intrinsics");
            features.add("seeded_keygen");
            features.add("deterministic_sign");
            signing = "hedged";
            sizes.put("public_key", publicSize);
            sizes.put("secret_key", form.size);
            sizes.put("signature", name.equals("ML-DSA-44") ? 2420 : name.equals("ML-DSA-65") ? 3309 : 4627);
        }

        @Override
        public Key keygen(byte[] seed) throws Exception {
            if (seed != null) {
                need("seed (xi)", seed, 32);
            }
            KeyPair pair = generate(name, name, seed);
            return new Key(pair.getPrivate(), raw(pair.getPublic(), publicSize));
        }

        @Override
        public Key importSecret(byte[] secret) throws Exception {
            if (secret.length != 32) {
                throw new NotOffered("ML-DSA through the JCA imports only the 32-byte seed xi here, not a "
                        + secret.length + "-byte key");
            }
            return keygen(secret);
        }

        /** The engine for one request: the row's own, or under a context (FIPS 204) a new
         * one that the provider sets it on; a provider without contexts answers not
         * offered. */
        private Signature engine(Signature own, byte[] context) throws Exception {
            if (context == null || context.length == 0) {
                return own;
            }
            if (context.length > 255) {
                throw new BadInput("an ML-DSA context is at most 255 bytes (FIPS 204)");
            }
            Signature contextual = jca.signature("ML-DSA");
            jca.context(contextual, context);
            return contextual;
        }

        @Override
        public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic) throws Exception {
            Signature s = engine(deterministic ? deterministicSigner : signer, context);
            if (deterministic) {
                s.initSign((PrivateKey) secret, new FixedRandom(new byte[32])); // rnd = 0^32
            } else {
                s.initSign((PrivateKey) secret);
            }
            s.update(message);
            return s.sign();
        }

        @Override
        public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature) throws Exception {
            Signature s = engine(verifier, context);
            need(name + " public key", publicKey, publicSize);
            PublicKey key = factory.generatePublic(new X509EncodedKeySpec(concat(header, publicKey)));
            return verifies(s, key, message, signature);
        }
    }

    /** How a classical algorithm's keys cross the protocol, raw, and become the JDK's: what
     * its agreement or signature is built on. The secret is 32 bytes for all of them. */
    private abstract class RawKeys {
        /** The algorithm's name, as messages about its keys say it. */
        final String name;
        /** The provider that makes the keys: the algorithm's library. */
        final String library;
        final int publicSize;

        RawKeys(String name, String library, int publicSize) {
            this.name = name;
            this.library = library;
            this.publicSize = publicSize;
        }

        /** A key pair, from the 32-byte private key or scalar where seed is not null. */
        abstract Algorithm.Key keygen(byte[] seed) throws Exception;

        abstract Algorithm.Key importSecret(byte[] secret) throws Exception;

        /** A raw public key (a peer's or a signer's), decoded inside the timed operation that
         * takes it, as a handshake decodes a key share. */
        abstract PublicKey publicKey(byte[] raw) throws Exception;
    }

    /** X25519 and Ed25519 keys as the protocol carries them: the 32-byte private key (RFC 7748
     * section 5's scalar; RFC 8032 section 5.1.5's seed) and the raw 32-byte public key that
     * ends the JDK's X.509 encoding. */
    private abstract class Curve25519Keys extends RawKeys {
        /** What the private key is called in a message about its length. */
        private final String privateKeyName;
        final KeyFactory factory;

        /** The X.509 SubjectPublicKeyInfo header before a raw public key, learnt from one
         * key the provider made. */
        final byte[] header;

        Curve25519Keys(String name, String privateKeyName) throws Exception {
            super(name, provider(jca.keyPairGenerator(name)), 32);
            this.privateKeyName = privateKeyName;
            factory = jca.keyFactory(name);
            header = spkiHeader(jca.keyPairGenerator(name).generateKeyPair().getPublic(), 32);
        }

        @Override
        Algorithm.Key keygen(byte[] seed) throws Exception {
            if (seed != null) {
                Algorithm.need(privateKeyName, seed, 32);
            }
            KeyPair pair = generate(name, name, seed);
            return new Algorithm.Key(pair.getPrivate(), raw(pair.getPublic(), 32));
        }

        @Override
        Algorithm.Key importSecret(byte[] secret) throws Exception {
            Algorithm.need(privateKeyName, secret, 32);
            return keygen(secret);
        }
    }

    private final class X25519Keys extends Curve25519Keys {
        X25519Keys() throws Exception {
            super("X25519", "X25519 private key");
        }

        @Override
        PublicKey publicKey(byte[] raw) throws Exception {
            Algorithm.need("X25519 public key", raw, 32);
            return jca.x25519(factory, raw, header);
        }
    }

    private final class Ed25519Keys extends Curve25519Keys {
        Ed25519Keys() throws Exception {
            super("Ed25519", "Ed25519 private key (seed)");
        }

        @Override
        PublicKey publicKey(byte[] raw) throws Exception {
            Algorithm.need("Ed25519 public key", raw, 32);
            return factory.generatePublic(new X509EncodedKeySpec(concat(header, raw)));
        }
    }

    /** P-256 (secp256r1) keys as the protocol carries them: the 32-byte scalar, 04 || x || y. */
    private final class P256Keys extends RawKeys {
        private final ECParameterSpec curve;
        private final KeyFactory factory;

        P256Keys(String name) throws Exception {
            super(name, provider(jca.keyPairGenerator("EC")), 65);
            AlgorithmParameters parameters = jca.parameters("EC");
            parameters.init(new ECGenParameterSpec("secp256r1"));
            curve = parameters.getParameterSpec(ECParameterSpec.class);
            factory = jca.keyFactory("EC");
        }

        @Override
        Algorithm.Key keygen(byte[] seed) throws Exception {
            if (seed != null) {
                return importSecret(seed);
            }
            KeyPairGenerator generator = jca.keyPairGenerator("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair pair = generator.generateKeyPair();
            return new Algorithm.Key(pair.getPrivate(), encode(((ECPublicKey) pair.getPublic()).getW()));
        }

        /** A private scalar (SEC 1 2.3.6). The JCA derives no public key from a private one,
         * so it is found with the JDK's own operations: ECDH with the base point gives x of
         * d*G (SEC 1 3.3.1), the curve equation gives y up to its sign (p = 3 mod 4, so a
         * square root is a power), and an ECDSA signature by d verifies under one of the two
         * points only. Correctness requests use this; no timed operation does. */
        @Override
        Algorithm.Key importSecret(byte[] secret) throws Exception {
            Algorithm.need(name + " private scalar", secret, 32);
            BigInteger s = new BigInteger(1, secret);
            if (s.signum() == 0 || s.compareTo(curve.getOrder()) >= 0) {
                throw new Algorithm.BadInput(name + " private scalar out of range");
            }
            PrivateKey key = factory.generatePrivate(new ECPrivateKeySpec(s, curve));
            KeyAgreement ecdh = jca.keyAgreement("ECDH");
            ecdh.init(key);
            ecdh.doPhase(factory.generatePublic(new ECPublicKeySpec(curve.getGenerator(), curve)), true);
            BigInteger x = new BigInteger(1, ecdh.generateSecret());
            BigInteger p = ((java.security.spec.ECFieldFp) curve.getCurve().getField()).getP();
            BigInteger rhs = x.pow(3).add(curve.getCurve().getA().multiply(x)).add(curve.getCurve().getB()).mod(p);
            BigInteger y = rhs.modPow(p.add(BigInteger.ONE).shiftRight(2), p);
            Signature ecdsa = jca.signature("SHA256withECDSA");
            ecdsa.initSign(key);
            byte[] probe = {0x70, 0x71, 0x62};
            ecdsa.update(probe);
            byte[] signature = ecdsa.sign();
            for (BigInteger candidate : new BigInteger[] {y, p.subtract(y)}) {
                ECPoint w = new ECPoint(x, candidate);
                ecdsa.initVerify(factory.generatePublic(new ECPublicKeySpec(w, curve)));
                ecdsa.update(probe);
                if (ecdsa.verify(signature)) {
                    return new Algorithm.Key(key, encode(w));
                }
            }
            throw new IllegalStateException("no point on the curve verifies the scalar's signature");
        }

        static byte[] encode(ECPoint w) {
            return concat(new byte[] {4}, concat(fixed(w.getAffineX()), fixed(w.getAffineY())));
        }

        @Override
        PublicKey publicKey(byte[] point) throws Exception {
            if (point.length != 65 || point[0] != 4) {
                throw new Algorithm.BadInput(name + " public key must be an uncompressed point (65 bytes, 04 || x || y)");
            }
            ECPoint w = new ECPoint(new BigInteger(1, Arrays.copyOfRange(point, 1, 33)),
                    new BigInteger(1, Arrays.copyOfRange(point, 33, 65)));
            return factory.generatePublic(new ECPublicKeySpec(w, curve));
        }

        static byte[] fixed(BigInteger value) {
            byte[] bytes = value.toByteArray();
            if (bytes.length == 32) {
                return bytes;
            }
            byte[] out = new byte[32];
            int length = Math.min(bytes.length, 32);
            System.arraycopy(bytes, bytes.length - length, out, 32 - length, length);
            return out;
        }
    }

    /** A classical algorithm: keys that cross the protocol raw, seeded from the 32-byte
     * secret. */
    private abstract class Classical extends Algorithm {
        final RawKeys keys;

        Classical(RawKeys keys, Kind kind, String... intrinsicFlags) {
            super(keys.name, kind, keys.library);
            this.keys = keys;
            codePath = jca.codePath(intrinsicFlags);
            features.add("seeded_keygen");
            sizes.put("public_key", keys.publicSize);
            sizes.put("secret_key", 32);
        }

        @Override
        public Key keygen(byte[] seed) throws Exception {
            return keys.keygen(seed);
        }

        @Override
        public Key importSecret(byte[] secret) throws Exception {
            return keys.importSecret(secret);
        }
    }

    /** Key agreement through a KeyAgreement (X25519, RFC 7748; ECDH over P-256, SEC 1, which
     * validates the peer point). */
    private final class Agreement extends Classical {
        private final KeyAgreement agreement;

        Agreement(RawKeys keys, String jcaName, String... intrinsicFlags) throws Exception {
            super(keys, Kind.AGREEMENT, intrinsicFlags);
            agreement = jca.keyAgreement(jcaName);
            sizes.put("shared_secret", 32);
        }

        @Override
        public byte[] derive(Object secret, byte[] peer) throws Exception {
            PublicKey key = keys.publicKey(peer);
            agreement.init((PrivateKey) secret);
            agreement.doPhase(key, true);
            return agreement.generateSecret();
        }
    }

    /** A classical signature through a Signature (Ed25519, RFC 8032; ECDSA over P-256), which
     * takes no context. */
    private final class ClassicalSignature extends Classical {
        private final Signature signer;
        private final Signature verifier;
        /** RFC 6979 signing where the provider has it under its own name, else null. */
        private final Signature deterministicSigner;

        /** {@code signing}: how it signs (see {@link Algorithm#signing}); {@code size}: its
         * signature's size, the longest where it varies; {@code deterministicName}: the
         * provider's name of its deterministic variant, null where there is none. */
        ClassicalSignature(RawKeys keys, String jcaName, String deterministicName, String signing, int size,
                String... intrinsicFlags) throws Exception {
            super(keys, Kind.SIGNATURE, intrinsicFlags);
            signer = jca.signature(jcaName);
            verifier = jca.signature(jcaName);
            deterministicSigner = deterministicName == null ? null : jca.signature(deterministicName);
            if (deterministicSigner != null) {
                features.add("deterministic_sign");
            }
            this.signing = signing;
            sizes.put("signature", size);
        }

        @Override
        public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic) throws Exception {
            noContext(context);
            if (deterministic && deterministicSigner != null) {
                return signed(deterministicSigner, (PrivateKey) secret, message);
            }
            return signed(signer, (PrivateKey) secret, message);
        }

        @Override
        public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature) throws Exception {
            noContext(context);
            return verifies(verifier, keys.publicKey(publicKey), message, signature);
        }
    }
}
