package pqbench.stacks.bc;

import java.io.IOException;
import java.math.BigInteger;
import java.net.URISyntaxException;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.security.SecureRandom;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.CipherParameters;
import org.bouncycastle.crypto.CryptoServicesRegistrar;
import org.bouncycastle.crypto.EncapsulatedSecretGenerator;
import org.bouncycastle.crypto.SecretWithEncapsulation;
import org.bouncycastle.crypto.Signer;
import org.bouncycastle.crypto.agreement.ECDHBasicAgreement;
import org.bouncycastle.crypto.agreement.X25519Agreement;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.generators.ECKeyPairGenerator;
import org.bouncycastle.crypto.params.AsymmetricKeyParameter;
import org.bouncycastle.crypto.params.ECDomainParameters;
import org.bouncycastle.crypto.params.ECKeyGenerationParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.Ed25519PublicKeyParameters;
import org.bouncycastle.crypto.params.ParametersWithContext;
import org.bouncycastle.crypto.params.ParametersWithRandom;
import org.bouncycastle.crypto.params.X25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.X25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.DSADigestSigner;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.Ed25519Signer;
import org.bouncycastle.crypto.signers.HMacDSAKCalculator;
import org.bouncycastle.crypto.signers.StandardDSAEncoding;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.util.BigIntegers;

import pqbench.stacks.Algorithm;
import pqbench.stacks.Implementation;
import pqbench.stacks.JvmRuntime;

/**
 * The {@code bouncycastle} implementation: BouncyCastle's lightweight API (bcprov-jdk18on),
 * the engines under its JCA provider, called directly. It runs on any JDK the jar supports
 * (Java 8 and newer), and it takes the FIPS inputs directly: seeded key generation (d || z,
 * xi, the X25519/Ed25519 private key, the P-256 scalar), derandomized ML-KEM encapsulation,
 * deterministic ML-DSA signing and RFC 6979 ECDSA, so pqbench runs the NIST known answers on
 * it. Every operation draws its randomness from BouncyCastle's default SecureRandom
 * (CryptoServicesRegistrar). Public keys are decoded inside each timed operation.
 */
public final class BouncyCastle extends Implementation {
    /** The Maven artifact this code is compiled against (the jar's version is read, not
     * written here). */
    static final String LIBRARY = "bcprov-jdk18on";

    private final SecureRandom random = CryptoServicesRegistrar.getSecureRandom();
    private final String randomness = "BouncyCastle's default SecureRandom (" + random.getAlgorithm() + ")";

    public BouncyCastle() {
        algorithms.add(new MlKem("ML-KEM-512", "ml_kem_512", 2));
        algorithms.add(new MlKem("ML-KEM-768", "ml_kem_768", 3));
        algorithms.add(new MlKem("ML-KEM-1024", "ml_kem_1024", 4));
        algorithms.add(new MlDsa("ML-DSA-44", "ml_dsa_44"));
        algorithms.add(new MlDsa("ML-DSA-65", "ml_dsa_65"));
        algorithms.add(new MlDsa("ML-DSA-87", "ml_dsa_87"));
        algorithms.add(new X25519());
        algorithms.add(new EcdhP256());
        algorithms.add(new Ed25519());
        algorithms.add(new EcdsaP256());
        for (Algorithm a : algorithms) {
            a.codePath = "Java (C2 JIT)";
            a.randomness = randomness;
        }
        libraries.put(LIBRARY, jarVersion());
        libraries.put("jdk", JvmRuntime.version());
        libraries.put("jvm options", JvmRuntime.options());
    }

    @Override
    public String needs() {
        return "JDK 17 or newer (the worker is compiled for Java 17); this is " + JvmRuntime.version();
    }

    /** The version in the manifest of the jar BouncyCastle's classes were loaded from. */
    static String jarVersion() {
        CodeSource source = CryptoServicesRegistrar.class.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return "unknown (no code source)";
        }
        try (JarFile jar = new JarFile(Paths.get(source.getLocation().toURI()).toFile())) {
            Manifest manifest = jar.getManifest();
            String version = manifest == null ? null : manifest.getMainAttributes().getValue("Bundle-Version");
            if (version == null) {
                version = manifest == null ? null : manifest.getMainAttributes().getValue("Implementation-Version");
            }
            return version == null ? "unknown (no version in " + jar.getName() + ")" : version;
        } catch (IOException | URISyntaxException | IllegalArgumentException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static final String LIGHTWEIGHT = LIBRARY;

    /** ML-KEM (FIPS 203): MLKEMKeyPairGenerator, MLKEMGenerator, MLKEMExtractor (through
     * {@link Pqc}, wherever this release keeps them). */
    private final class MlKem extends Algorithm {
        private final Pqc.Kem kem;
        private final EncapsulatedSecretGenerator generator;
        private final int publicSize;
        private final int expandedSize;
        private final int ciphertextSize;

        MlKem(String name, String field, int k) {
            super(name, Kind.KEM, LIGHTWEIGHT);
            kem = new Pqc.Kem(field);
            generator = kem.generator(random);
            publicSize = 384 * k + 32;
            expandedSize = 768 * k + 96;
            ciphertextSize = k == 4 ? 1568 : 32 * (k * 10 + 4);
            features.add("seeded_keygen");
            features.add("derandomized_encaps");
            features.add("import_expanded");
            sizes.put("public_key", publicSize);
            sizes.put("secret_key", expandedSize);
            sizes.put("ciphertext", ciphertextSize);
            sizes.put("shared_secret", 32);
        }

        @Override
        public Key keygen(byte[] seed) {
            AsymmetricKeyParameter secret;
            if (seed == null) {
                secret = kem.keyPairGenerator(random).generateKeyPair().getPrivate();
            } else {
                need("seed (d || z)", seed, 64);
                secret = kem.privateKey(seed);
            }
            return new Key(secret, kem.publicOf(secret));
        }

        @Override
        public Key importSecret(byte[] secret) {
            if (secret.length != 64 && secret.length != expandedSize) {
                throw new BadInput(name + " secret key must be the 64-byte seed or the " + expandedSize
                        + "-byte dk, got " + secret.length);
            }
            AsymmetricKeyParameter key = kem.privateKey(secret);
            return new Key(key, kem.publicOf(key));
        }

        @Override
        public Encapsulated encaps(byte[] publicKey, byte[] m) {
            need(name + " public key", publicKey, publicSize);
            AsymmetricKeyParameter key = kem.publicKey(publicKey);
            SecretWithEncapsulation result;
            if (m == null) {
                result = generator.generateEncapsulated(key);
            } else {
                need("random (m)", m, 32);
                result = kem.encapsulate(generator, key, m);
            }
            return new Encapsulated(result.getEncapsulation(), result.getSecret());
        }

        @Override
        public byte[] decaps(Object secret, byte[] ciphertext) {
            need(name + " ciphertext", ciphertext, ciphertextSize);
            return kem.extractor((AsymmetricKeyParameter) secret).extractSecret(ciphertext);
        }
    }

    /** ML-DSA (FIPS 204, pure): MLDSASigner, hedged unless deterministic, with a context
     * (through {@link Pqc}). */
    private final class MlDsa extends Algorithm {
        private final Pqc.Dsa dsa;
        private final Signer signer;
        private final Signer verifier;
        private final int publicSize;

        MlDsa(String name, String field) {
            super(name, Kind.SIGNATURE, LIGHTWEIGHT);
            dsa = new Pqc.Dsa(field);
            signer = dsa.signer();
            verifier = dsa.signer();
            publicSize = name.equals("ML-DSA-44") ? 1312 : name.equals("ML-DSA-65") ? 1952 : 2592;
            features.add("seeded_keygen");
            features.add("deterministic_sign");
            signing = "hedged";
            sizes.put("public_key", publicSize);
            sizes.put("secret_key", 32);
            sizes.put("signature", name.equals("ML-DSA-44") ? 2420 : name.equals("ML-DSA-65") ? 3309 : 4627);
        }

        @Override
        public Key keygen(byte[] seed) {
            AsymmetricKeyParameter secret;
            if (seed == null) {
                secret = dsa.keyPairGenerator(random).generateKeyPair().getPrivate();
            } else {
                need("seed (xi)", seed, 32);
                secret = dsa.privateKey(seed);
            }
            return new Key(secret, dsa.publicOf(secret));
        }

        @Override
        public Key importSecret(byte[] secret) {
            if (secret.length != 32) {
                throw new NotOffered("BouncyCastle's ML-DSA is imported here from the 32-byte seed xi only, not a "
                        + secret.length + "-byte key");
            }
            return keygen(secret);
        }

        private CipherParameters withContext(CipherParameters key, byte[] context) {
            if (context != null && context.length > 255) {
                throw new BadInput("an ML-DSA context is at most 255 bytes (FIPS 204)");
            }
            return context == null || context.length == 0 ? key : new ParametersWithContext(key, context);
        }

        @Override
        public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic) throws Exception {
            CipherParameters key = (AsymmetricKeyParameter) secret;
            signer.init(true, withContext(deterministic ? key : new ParametersWithRandom(key, random), context));
            signer.update(message, 0, message.length);
            return signer.generateSignature();
        }

        @Override
        public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature) {
            need(name + " public key", publicKey, publicSize);
            verifier.init(false, withContext(dsa.publicKey(publicKey), context));
            verifier.update(message, 0, message.length);
            return verifier.verifySignature(signature);
        }
    }

    /** X25519 (RFC 7748): X25519Agreement, which refuses an all-zero result. */
    private final class X25519 extends Algorithm {
        private final X25519Agreement agreement = new X25519Agreement();

        X25519() {
            super("X25519", Kind.AGREEMENT, LIGHTWEIGHT);
            features.add("seeded_keygen");
            sizes.put("public_key", 32);
            sizes.put("secret_key", 32);
            sizes.put("shared_secret", 32);
        }

        @Override
        public Key keygen(byte[] seed) {
            X25519PrivateKeyParameters secret;
            if (seed == null) {
                secret = new X25519PrivateKeyParameters(random);
            } else {
                need("X25519 private key", seed, 32);
                secret = new X25519PrivateKeyParameters(seed, 0);
            }
            return new Key(secret, secret.generatePublicKey().getEncoded());
        }

        @Override
        public Key importSecret(byte[] secret) {
            need("X25519 private key", secret, 32);
            return keygen(secret);
        }

        @Override
        public byte[] derive(Object secret, byte[] peer) {
            need("X25519 public key", peer, 32);
            byte[] shared = new byte[32];
            agreement.init((X25519PrivateKeyParameters) secret);
            agreement.calculateAgreement(new X25519PublicKeyParameters(peer, 0), shared, 0);
            return shared;
        }
    }

    /** Ed25519 (RFC 8032, pure): Ed25519Signer, deterministic by definition. */
    private final class Ed25519 extends Algorithm {
        private final Ed25519Signer signer = new Ed25519Signer();
        private final Ed25519Signer verifier = new Ed25519Signer();

        Ed25519() {
            super("Ed25519", Kind.SIGNATURE, LIGHTWEIGHT);
            features.add("seeded_keygen");
            signing = "deterministic";
            sizes.put("public_key", 32);
            sizes.put("secret_key", 32);
            sizes.put("signature", 64);
        }

        @Override
        public Key keygen(byte[] seed) {
            Ed25519PrivateKeyParameters secret;
            if (seed == null) {
                secret = new Ed25519PrivateKeyParameters(random);
            } else {
                need("Ed25519 private key (seed)", seed, 32);
                secret = new Ed25519PrivateKeyParameters(seed, 0);
            }
            return new Key(secret, secret.generatePublicKey().getEncoded());
        }

        @Override
        public Key importSecret(byte[] secret) {
            need("Ed25519 private key (seed)", secret, 32);
            return keygen(secret);
        }

        @Override
        public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic) {
            noContext(context);
            signer.init(true, (Ed25519PrivateKeyParameters) secret);
            signer.update(message, 0, message.length);
            return signer.generateSignature();
        }

        @Override
        public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature) {
            noContext(context);
            need("Ed25519 public key", publicKey, 32);
            verifier.init(false, new Ed25519PublicKeyParameters(publicKey, 0));
            verifier.update(message, 0, message.length);
            return verifier.verifySignature(signature);
        }
    }

    /** P-256 with BouncyCastle's custom secp256r1 arithmetic (what its provider uses). */
    private abstract class P256 extends Algorithm {
        final ECDomainParameters domain;

        P256(String name, Kind kind) {
            super(name, kind, LIGHTWEIGHT);
            X9ECParameters curve = CustomNamedCurves.getByName("secp256r1");
            domain = new ECDomainParameters(curve.getCurve(), curve.getG(), curve.getN(), curve.getH(), curve.getSeed());
            features.add("seeded_keygen");
            sizes.put("public_key", 65);
            sizes.put("secret_key", 32);
        }

        @Override
        public Key keygen(byte[] seed) {
            if (seed == null) {
                ECKeyPairGenerator keys = new ECKeyPairGenerator();
                keys.init(new ECKeyGenerationParameters(domain, random));
                AsymmetricCipherKeyPair pair = keys.generateKeyPair();
                return new Key(pair.getPrivate(), ((ECPublicKeyParameters) pair.getPublic()).getQ().getEncoded(false));
            }
            need(name + " private scalar", seed, 32);
            BigInteger d = new BigInteger(1, seed);
            if (d.signum() == 0 || d.compareTo(domain.getN()) >= 0) {
                throw new BadInput(name + " private scalar out of range");
            }
            ECPoint q = domain.getG().multiply(d).normalize();
            return new Key(new ECPrivateKeyParameters(d, domain), q.getEncoded(false));
        }

        @Override
        public Key importSecret(byte[] secret) {
            return keygen(secret);
        }

        ECPublicKeyParameters decode(byte[] point) {
            if (point.length != 65 || point[0] != 4) {
                throw new BadInput(name + " public key must be an uncompressed point (65 bytes, 04 || x || y)");
            }
            try {
                return new ECPublicKeyParameters(domain.getCurve().decodePoint(point), domain);
            } catch (IllegalArgumentException e) {
                throw new BadInput(name + " public key is not a point on the curve: " + e.getMessage());
            }
        }
    }

    /** ECDH over P-256 (SEC 1): ECDHBasicAgreement, the x coordinate as 32 bytes. */
    private final class EcdhP256 extends P256 {
        private final ECDHBasicAgreement agreement = new ECDHBasicAgreement();

        EcdhP256() {
            super("ECDH-P-256", Kind.AGREEMENT);
            sizes.put("shared_secret", 32);
        }

        @Override
        public byte[] derive(Object secret, byte[] peer) {
            ECPublicKeyParameters key = decode(peer);
            agreement.init((ECPrivateKeyParameters) secret);
            return BigIntegers.asUnsignedByteArray(32, agreement.calculateAgreement(key));
        }
    }

    /** ECDSA over P-256 with SHA-256, DER signatures (DSADigestSigner): a random nonce, or
     * RFC 6979 (HMacDSAKCalculator) when deterministic. */
    private final class EcdsaP256 extends P256 {
        private final DSADigestSigner signer =
                new DSADigestSigner(new ECDSASigner(), new SHA256Digest(), StandardDSAEncoding.INSTANCE);
        private final DSADigestSigner deterministicSigner = new DSADigestSigner(
                new ECDSASigner(new HMacDSAKCalculator(new SHA256Digest())), new SHA256Digest(),
                StandardDSAEncoding.INSTANCE);
        private final DSADigestSigner verifier =
                new DSADigestSigner(new ECDSASigner(), new SHA256Digest(), StandardDSAEncoding.INSTANCE);

        EcdsaP256() {
            super("ECDSA-P-256", Kind.SIGNATURE);
            features.add("deterministic_sign");
            signing = "randomized";
            sizes.put("signature", 72);
        }

        @Override
        public byte[] sign(Object secret, byte[] message, byte[] context, boolean deterministic) {
            noContext(context);
            DSADigestSigner s = deterministic ? deterministicSigner : signer;
            s.init(true, deterministic ? (ECPrivateKeyParameters) secret
                    : new ParametersWithRandom((ECPrivateKeyParameters) secret, random));
            s.update(message, 0, message.length);
            return s.generateSignature();
        }

        @Override
        public boolean verify(byte[] publicKey, byte[] message, byte[] context, byte[] signature) {
            noContext(context);
            verifier.init(false, decode(publicKey));
            verifier.update(message, 0, message.length);
            return verifier.verifySignature(signature);
        }
    }
}
