package pqbench.stacks.bc;

import java.security.SecureRandom;
import java.util.function.Supplier;

import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.AsymmetricCipherKeyPairGenerator;
import org.bouncycastle.crypto.CipherParameters;
import org.bouncycastle.crypto.CryptoException;
import org.bouncycastle.crypto.CryptoServicesRegistrar;
import org.bouncycastle.crypto.EncapsulatedSecretGenerator;
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
import org.bouncycastle.crypto.params.ParametersWithRandom;
import org.bouncycastle.crypto.params.X25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.X25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.DSADigestSigner;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.Ed25519Signer;
import org.bouncycastle.crypto.signers.StandardDSAEncoding;

import pqbench.stacks.ReferenceRounds;
import pqbench.stacks.ReferenceRounds.Call;

/**
 * A plain benchmark of BouncyCastle's lightweight API, without the worker: the reference
 * that pqbench's fidelity benchmark pairs with the {@code bouncycastle} rows.
 *
 * <p>{@code java OPTIONS -cp CLASSES:LIB/* pqbench.stacks.bc.Reference ALG OPERATION SECONDS
 * [ROUNDS|-]} times rounds as {@link ReferenceRounds} says. The operation is the one the
 * worker times (the received public key decoded by each call, 64 rotating messages,
 * BouncyCastle's default SecureRandom), written directly against the API; only the ML-KEM
 * and ML-DSA classes are reached through the worker's {@link Pqc} shim, so the reference
 * compiles against every release the worker does.
 */
public final class Reference {
    private Reference() {
    }

    public static void main(String[] args) throws Exception {
        ReferenceRounds.main("pqbench.stacks.bc.Reference", "BouncyCastle", args,
                (alg, operation) -> call(alg, operation, CryptoServicesRegistrar.getSecureRandom()));
    }

    private static byte[][] messages(SecureRandom random) {
        byte[][] messages = new byte[64][32];
        for (byte[] m : messages) {
            random.nextBytes(m);
        }
        return messages;
    }

    /** Signing and verifying as the worker's rows do: one signer, 64 rotating 32-byte messages
     * signed before the clock starts, and the signer initialised in every call with parameters
     * made in that call (the received public key decoded each time). */
    private static final class Rotation {
        private final Signer signer;
        private final Supplier<CipherParameters> signing;
        private final Supplier<CipherParameters> verifying;
        private final byte[][] messages;
        private final byte[][] signatures = new byte[64][];
        private int next;

        Rotation(Signer signer, Supplier<CipherParameters> signing, Supplier<CipherParameters> verifying,
                SecureRandom random) throws CryptoException {
            this.signer = signer;
            this.signing = signing;
            this.verifying = verifying;
            messages = messages(random);
            for (int i = 0; i < 64; i++) {
                signer.init(true, signing.get());
                signer.update(messages[i], 0, 32);
                signatures[i] = signer.generateSignature();
            }
        }

        /** The sign or verify call; null for another operation. */
        Call call(String operation) {
            switch (operation) {
                case "sign":
                    return this::sign;
                case "verify":
                    return this::verify;
                default:
                    return null;
            }
        }

        private int sign() throws CryptoException {
            signer.init(true, signing.get());
            signer.update(messages[next], 0, 32);
            next = (next + 1) & 63;
            return signer.generateSignature()[0];
        }

        private int verify() {
            int i = next;
            next = (i + 1) & 63;
            signer.init(false, verifying.get());
            signer.update(messages[i], 0, 32);
            if (!signer.verifySignature(signatures[i])) {
                throw new IllegalStateException("a signature did not verify");
            }
            return i;
        }
    }

    private static Call call(String alg, String operation, SecureRandom random) throws Exception {
        switch (alg) {
            case "ML-KEM-512":
                return mlkem("ml_kem_512", 2, operation, random);
            case "ML-KEM-768":
                return mlkem("ml_kem_768", 3, operation, random);
            case "ML-KEM-1024":
                return mlkem("ml_kem_1024", 4, operation, random);
            case "ML-DSA-44":
                return mldsa("ml_dsa_44", operation, random);
            case "ML-DSA-65":
                return mldsa("ml_dsa_65", operation, random);
            case "ML-DSA-87":
                return mldsa("ml_dsa_87", operation, random);
            case "X25519":
                return x25519(operation, random);
            case "Ed25519":
                return ed25519(operation, random);
            case "ECDH-P-256":
            case "ECDSA-P-256":
                return p256(alg, operation, random);
            default:
                return null;
        }
    }

    private static Call mlkem(String field, int k, String operation, SecureRandom random) {
        Pqc.Kem kem = new Pqc.Kem(field);
        AsymmetricCipherKeyPairGenerator generator = kem.keyPairGenerator(random);
        AsymmetricCipherKeyPair pair = generator.generateKeyPair();
        byte[] encoded = kem.encoded(pair.getPublic());
        EncapsulatedSecretGenerator encapsulator = kem.generator(random);
        switch (operation) {
            case "keygen":
                return () -> kem.encoded(generator.generateKeyPair().getPublic())[0];
            case "encaps":
                return () -> encapsulator.generateEncapsulated(kem.publicKey(encoded)).getEncapsulation()[0];
            case "decaps": {
                byte[] ciphertext = encapsulator.generateEncapsulated(pair.getPublic()).getEncapsulation();
                AsymmetricKeyParameter key = pair.getPrivate();
                return () -> kem.extractor(key).extractSecret(ciphertext)[0];
            }
            default:
                return null;
        }
    }

    private static Call mldsa(String field, String operation, SecureRandom random) throws Exception {
        Pqc.Dsa dsa = new Pqc.Dsa(field);
        AsymmetricCipherKeyPairGenerator generator = dsa.keyPairGenerator(random);
        AsymmetricCipherKeyPair pair = generator.generateKeyPair();
        AsymmetricKeyParameter key = pair.getPrivate();
        byte[] encoded = dsa.encoded(pair.getPublic());
        Rotation rotation = new Rotation(dsa.signer(), () -> new ParametersWithRandom(key, random),
                () -> dsa.publicKey(encoded), random);
        if (operation.equals("keygen")) {
            return () -> dsa.encoded(generator.generateKeyPair().getPublic())[0];
        }
        return rotation.call(operation);
    }

    private static Call x25519(String operation, SecureRandom random) {
        X25519PrivateKeyParameters mine = new X25519PrivateKeyParameters(random);
        byte[] theirs = new X25519PrivateKeyParameters(random).generatePublicKey().getEncoded();
        X25519Agreement agreement = new X25519Agreement();
        switch (operation) {
            case "keygen":
                return () -> new X25519PrivateKeyParameters(random).generatePublicKey().getEncoded()[0];
            case "derive":
                return () -> {
                    byte[] shared = new byte[32];
                    agreement.init(mine);
                    agreement.calculateAgreement(new X25519PublicKeyParameters(theirs, 0), shared, 0);
                    return shared[0];
                };
            default:
                return null;
        }
    }

    private static Call ed25519(String operation, SecureRandom random) throws CryptoException {
        Ed25519PrivateKeyParameters key = new Ed25519PrivateKeyParameters(random);
        byte[] encoded = key.generatePublicKey().getEncoded();
        Rotation rotation = new Rotation(new Ed25519Signer(), () -> key,
                () -> new Ed25519PublicKeyParameters(encoded, 0), random);
        if (operation.equals("keygen")) {
            return () -> new Ed25519PrivateKeyParameters(random).generatePublicKey().getEncoded()[0];
        }
        return rotation.call(operation);
    }

    private static Call p256(String alg, String operation, SecureRandom random) throws CryptoException {
        X9ECParameters curve = CustomNamedCurves.getByName("secp256r1");
        ECDomainParameters domain = new ECDomainParameters(curve.getCurve(), curve.getG(), curve.getN(),
                curve.getH(), curve.getSeed());
        ECKeyPairGenerator generator = new ECKeyPairGenerator();
        generator.init(new ECKeyGenerationParameters(domain, random));
        AsymmetricCipherKeyPair pair = generator.generateKeyPair();
        ECPrivateKeyParameters key = (ECPrivateKeyParameters) pair.getPrivate();
        byte[] encoded = ((ECPublicKeyParameters) pair.getPublic()).getQ().getEncoded(false);
        if (operation.equals("keygen")) {
            return () -> ((ECPublicKeyParameters) generator.generateKeyPair().getPublic()).getQ().getEncoded(false)[1];
        }
        if (alg.equals("ECDH-P-256")) {
            if (!operation.equals("derive")) {
                return null;
            }
            byte[] theirs = ((ECPublicKeyParameters) generator.generateKeyPair().getPublic()).getQ().getEncoded(false);
            ECDHBasicAgreement agreement = new ECDHBasicAgreement();
            return () -> {
                agreement.init(key);
                return agreement.calculateAgreement(
                        new ECPublicKeyParameters(domain.getCurve().decodePoint(theirs), domain)).intValue();
            };
        }
        return new Rotation(
                new DSADigestSigner(new ECDSASigner(), new SHA256Digest(), StandardDSAEncoding.INSTANCE),
                () -> new ParametersWithRandom(key, random),
                () -> new ECPublicKeyParameters(domain.getCurve().decodePoint(encoded), domain), random)
                .call(operation);
    }
}
