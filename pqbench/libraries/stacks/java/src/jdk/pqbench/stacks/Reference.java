package pqbench.stacks;

import java.math.BigInteger;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.XECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import java.security.spec.XECPublicKeySpec;
import javax.crypto.KeyAgreement;

import pqbench.stacks.ReferenceRounds.Call;

/**
 * A plain benchmark of the JDK's providers through the documented JCA, without the worker:
 * the reference that pqbench's fidelity benchmark pairs with the {@code java} rows; given
 * a provider ({@code pqbench.stacks.bc.Reference} gives BouncyCastle's), the same loops
 * through that provider's engines, for the {@code bouncycastle} rows.
 *
 * <p>{@code java OPTIONS -cp CLASSES pqbench.stacks.Reference ALG OPERATION SECONDS [ROUNDS|-]}
 * times rounds as {@link ReferenceRounds} says. The operation is the one the worker times
 * (the received public key decoded by each call, a Decapsulator per decapsulation, 64
 * rotating messages), written directly against the JCA; only javax.crypto.KEM is reached
 * through {@link KemApi}, which this class shares with the worker so the sources compile for
 * Java 17.
 */
public final class Reference {
    private Reference() {
    }

    public static void main(String[] args) throws Exception {
        ReferenceRounds.main("pqbench.stacks.Reference", "JDK", args,
                (alg, operation) -> call(null, alg, operation));
    }

    private static KeyPairGenerator keyPairGenerator(Provider provider, String name) throws Exception {
        return provider == null ? KeyPairGenerator.getInstance(name) : KeyPairGenerator.getInstance(name, provider);
    }

    private static KeyFactory keyFactory(Provider provider, String name) throws Exception {
        return provider == null ? KeyFactory.getInstance(name) : KeyFactory.getInstance(name, provider);
    }

    private static Signature signature(Provider provider, String name) throws Exception {
        return provider == null ? Signature.getInstance(name) : Signature.getInstance(name, provider);
    }

    private static KeyAgreement keyAgreement(Provider provider, String name) throws Exception {
        return provider == null ? KeyAgreement.getInstance(name) : KeyAgreement.getInstance(name, provider);
    }

    private static byte[][] messages() {
        byte[][] messages = new byte[64][32];
        SecureRandom random = new SecureRandom();
        for (byte[] m : messages) {
            random.nextBytes(m);
        }
        return messages;
    }

    /** The row's call through the engines of {@code provider} (null: the JDK's own, in
     * preference order): {@code getInstance(name, provider)}, as an application asks for
     * one provider. */
    public static Call call(Provider provider, String alg, String operation) throws Exception {
        if (alg.startsWith("ML-KEM-")) {
            KeyPairGenerator generator = keyPairGenerator(provider, alg);
            KeyPair pair = generator.generateKeyPair();
            byte[] encoded = pair.getPublic().getEncoded();
            KeyFactory factory = keyFactory(provider, "ML-KEM");
            Object kem = KemApi.getInstance("ML-KEM", provider);
            switch (operation) {
                case "keygen":
                    return () -> generator.generateKeyPair().getPublic().getEncoded()[30];
                case "encaps":
                    return () -> KemApi.encapsulate(kem, factory.generatePublic(new X509EncodedKeySpec(encoded)),
                            null)[0][0];
                case "decaps": {
                    byte[] ciphertext = KemApi.encapsulate(kem, pair.getPublic(), null)[0];
                    return () -> KemApi.decapsulate(kem, pair.getPrivate(), ciphertext)[0];
                }
                default:
                    return null;
            }
        }
        if (alg.startsWith("ML-DSA-") || alg.equals("Ed25519") || alg.equals("ECDSA-P-256")) {
            boolean ecdsa = alg.equals("ECDSA-P-256");
            KeyPairGenerator generator = keyPairGenerator(provider, ecdsa ? "EC" : alg);
            if (ecdsa) {
                generator.initialize(new ECGenParameterSpec("secp256r1"));
            }
            KeyPair pair = generator.generateKeyPair();
            String family = ecdsa ? "SHA256withECDSA" : alg.equals("Ed25519") ? "Ed25519" : "ML-DSA";
            Signature signer = signature(provider, family);
            Signature verifier = signature(provider, family);
            byte[][] messages = messages();
            byte[][] signatures = new byte[64][];
            for (int i = 0; i < 64; i++) {
                signer.initSign(pair.getPrivate());
                signer.update(messages[i]);
                signatures[i] = signer.sign();
            }
            KeyFactory factory = keyFactory(provider, ecdsa ? "EC" : alg.equals("Ed25519") ? "Ed25519" : "ML-DSA");
            int[] next = {0};
            switch (operation) {
                case "keygen":
                    return () -> generator.generateKeyPair().getPublic().getEncoded()[30];
                case "sign":
                    return () -> {
                        PrivateKey key = pair.getPrivate();
                        signer.initSign(key);
                        signer.update(messages[next[0]]);
                        next[0] = (next[0] + 1) & 63;
                        return signer.sign()[8];
                    };
                case "verify": {
                    PublicKey decoded = pair.getPublic();
                    ECPublicKeySpec point = ecdsa
                            ? new ECPublicKeySpec(((ECPublicKey) decoded).getW(), ((ECPublicKey) decoded).getParams())
                            : null;
                    byte[] encoded = decoded.getEncoded();
                    return () -> {
                        int i = next[0];
                        next[0] = (i + 1) & 63;
                        verifier.initVerify(ecdsa ? factory.generatePublic(point)
                                : factory.generatePublic(new X509EncodedKeySpec(encoded)));
                        verifier.update(messages[i]);
                        if (!verifier.verify(signatures[i])) {
                            throw new IllegalStateException("a signature did not verify");
                        }
                        return i;
                    };
                }
                default:
                    return null;
            }
        }
        if (alg.equals("X25519") || alg.equals("ECDH-P-256")) {
            boolean x25519 = alg.equals("X25519");
            KeyPairGenerator generator = keyPairGenerator(provider, x25519 ? "X25519" : "EC");
            if (!x25519) {
                generator.initialize(new ECGenParameterSpec("secp256r1"));
            }
            KeyPair mine = generator.generateKeyPair();
            PublicKey theirs = generator.generateKeyPair().getPublic();
            KeyFactory factory = keyFactory(provider, x25519 ? "X25519" : "EC");
            KeyAgreement agreement = keyAgreement(provider, x25519 ? "X25519" : "ECDH");
            switch (operation) {
                case "keygen":
                    return () -> generator.generateKeyPair().getPublic().getEncoded()[20];
                case "derive": {
                    BigInteger u = x25519 && provider == null ? ((XECPublicKey) theirs).getU() : null;
                    ECPublicKeySpec point = x25519 ? null
                            : new ECPublicKeySpec(((ECPublicKey) theirs).getW(), ((ECPublicKey) theirs).getParams());
                    byte[] spki = theirs.getEncoded();
                    return () -> {
                        PublicKey peer = !x25519 ? factory.generatePublic(point)
                                : provider == null
                                ? factory.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, u))
                                : factory.generatePublic(new X509EncodedKeySpec(spki));
                        agreement.init(mine.getPrivate());
                        agreement.doPhase(peer, true);
                        return agreement.generateSecret()[0];
                    };
                }
                default:
                    return null;
            }
        }
        return null;
    }
}
