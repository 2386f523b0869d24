package pqbench.stacks;

import java.security.AlgorithmParameters;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import javax.crypto.KeyAgreement;

/**
 * The JCA as an application calls it: the engines of the JDK's own providers, in their
 * preference order ({@code provider} null), or of one provider given as
 * {@code getInstance(name, provider)} (BouncyCastle's). {@link JdkProviders} reaches every
 * engine through here, so the {@code java} and {@code bouncycastle} implementations are the
 * same calls, each to its provider; what a provider adds or lacks (a context for ML-DSA,
 * RFC 6979 ECDSA, javax.crypto.KEM before JDK 21) is a method a provider's Jca overrides.
 */
public class Jca {
    /** One KEM's two calls, as its provider offers them. */
    public interface Kem {
        /** {ciphertext, shared secret}, drawing the randomness from {@code random}. */
        byte[][] encapsulate(PublicKey key, SecureRandom random) throws Exception;

        byte[] decapsulate(PrivateKey key, byte[] ciphertext) throws Exception;
    }

    /** The provider asked, null for the JDK's own. */
    public final Provider provider;

    public Jca(Provider provider) {
        this.provider = provider;
    }

    public KeyPairGenerator keyPairGenerator(String algorithm) throws Exception {
        return provider == null ? KeyPairGenerator.getInstance(algorithm)
                : KeyPairGenerator.getInstance(algorithm, provider);
    }

    public KeyFactory keyFactory(String algorithm) throws Exception {
        return provider == null ? KeyFactory.getInstance(algorithm) : KeyFactory.getInstance(algorithm, provider);
    }

    public Signature signature(String algorithm) throws Exception {
        return provider == null ? Signature.getInstance(algorithm) : Signature.getInstance(algorithm, provider);
    }

    public KeyAgreement keyAgreement(String algorithm) throws Exception {
        return provider == null ? KeyAgreement.getInstance(algorithm)
                : KeyAgreement.getInstance(algorithm, provider);
    }

    public AlgorithmParameters parameters(String algorithm) throws Exception {
        return provider == null ? AlgorithmParameters.getInstance(algorithm)
                : AlgorithmParameters.getInstance(algorithm, provider);
    }

    /** javax.crypto.KEM (JDK 21), through method handles so the worker compiles for Java 17. */
    public Kem kem(String algorithm) throws Exception {
        if (KemApi.MISSING != null) {
            throw new UnsupportedOperationException(KemApi.MISSING);
        }
        Object kem = KemApi.getInstance(algorithm, provider);
        return new Kem() {
            @Override
            public byte[][] encapsulate(PublicKey key, SecureRandom random) throws Exception {
                return KemApi.encapsulate(kem, key, random);
            }

            @Override
            public byte[] decapsulate(PrivateKey key, byte[] ciphertext) throws Exception {
                return KemApi.decapsulate(kem, key, ciphertext);
            }
        };
    }

    /** How a provider holds an ML-KEM or ML-DSA private key while it is timed (the
     * protocol's key_form), its size in that form, and the PKCS#8 header before a bare
     * expanded key where the provider encodes its keys that way (so an expanded key can be
     * imported), else null. */
    public static final class KeyForm {
        public final String name;
        public final int size;
        public final byte[] importHeader;

        public KeyForm(String name, int size, byte[] importHeader) {
            this.name = name;
            this.size = size;
            this.importHeader = importHeader;
        }
    }

    /** The JDK's: the expanded key (JDK 25 encodes and decodes it per operation), or the
     * seed, as a sample key's PKCS#8 encoding shows. */
    public KeyForm keyForm(PrivateKey sample, int expandedSize, int seedSize) {
        byte[] header = JdkProviders.expandedHeader(sample, expandedSize);
        return header != null ? new KeyForm("expanded", expandedSize, header) : new KeyForm("seed", seedSize, null);
    }

    /** The library a provider's engine belongs to, as the hello names it. */
    public String library(Provider engineProvider) {
        return engineProvider.getName();
    }

    /** That library's version. */
    public String version(String library) {
        return JvmRuntime.version();
    }

    /** The CPU code path of an algorithm whose JDK code HotSpot may replace by the
     * intrinsics {@code flags}. */
    public String codePath(String... flags) {
        return JdkProviders.intrinsics(flags);
    }

    /** {@code signer} made to sign or verify under an ML-DSA context (FIPS 204); a
     * provider that takes none answers not offered. Called before init, on an engine of its
     * own. */
    public void context(Signature signer, byte[] context) throws Exception {
        throw new Algorithm.NotOffered("ML-DSA through " + (provider == null ? "the JDK" : provider.getName())
                + " takes no context");
    }

    /** The JCA name of deterministic ECDSA with SHA-256 (RFC 6979), null where the provider
     * has none (the JDK's). */
    public String deterministicEcdsa() {
        return null;
    }

    /** An X25519 public key from its raw 32 bytes (RFC 7748), as a handshake decodes a
     * peer's key share: the JDK's own JSSE through an XECPublicKeySpec. */
    public PublicKey x25519(KeyFactory factory, byte[] raw, byte[] spkiHeader) throws Exception {
        byte[] reversed = new byte[32];
        for (int i = 0; i < 32; i++) {
            reversed[i] = raw[31 - i];
        }
        reversed[0] &= 0x7f; // RFC 7748 section 5: the top bit masked
        return factory.generatePublic(new java.security.spec.XECPublicKeySpec(
                java.security.spec.NamedParameterSpec.X25519, new java.math.BigInteger(1, reversed)));
    }
}
