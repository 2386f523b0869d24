package pqbench.stacks.bc;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import javax.crypto.KeyGenerator;

import org.bouncycastle.crypto.CryptoServicesRegistrar;
import org.bouncycastle.jcajce.SecretKeyWithEncapsulation;
import org.bouncycastle.jcajce.spec.ContextParameterSpec;
import org.bouncycastle.jcajce.spec.KEMExtractSpec;
import org.bouncycastle.jcajce.spec.KEMGenerateSpec;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

import pqbench.stacks.Jca;
import pqbench.stacks.JdkProviders;
import pqbench.stacks.JvmRuntime;

/**
 * The {@code bouncycastle} implementation: the BouncyCastle provider (bcprov-jdk18on) through
 * the JCA, as Java applications and BouncyCastle's own JSSE call it:
 * {@code KeyPairGenerator}, {@code KEM}, {@code KeyAgreement}, {@code Signature} and
 * {@code KeyFactory} of the provider object, {@code getInstance(name, provider)}. The calls
 * are {@link JdkProviders}'s, each to this provider's engine; what the provider adds is
 * here: ML-DSA contexts (its {@code ContextParameterSpec}), RFC 6979 ECDSA
 * ({@code SHA256withECDDSA}), and on a JDK older than 21, where javax.crypto.KEM is missing,
 * its own JCA KEM ({@code KeyGenerator} with {@code KEMGenerateSpec} and
 * {@code KEMExtractSpec}). It runs on any JDK from 17.
 */
public final class BouncyCastle extends JdkProviders {
    /** The Maven artifact this code is compiled against (the jar's version is read, not
     * written here). */
    static final String LIBRARY = "bcprov-jdk18on";

    public BouncyCastle() {
        super(new Provider(), "BouncyCastle's default SecureRandom ("
                + CryptoServicesRegistrar.getSecureRandom().getAlgorithm() + ")");
        libraries.put("jdk", JvmRuntime.version());
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

    /** The BouncyCastle provider's engines, and what it adds to the JCA. */
    static final class Provider extends Jca {
        Provider() {
            super(new BouncyCastleProvider());
        }

        @Override
        public String library(java.security.Provider engineProvider) {
            return LIBRARY;
        }

        @Override
        public String version(String library) {
            return jarVersion();
        }

        /** Pure Java, with its own Keccak and field arithmetic: HotSpot's intrinsics are the
         * JDK's classes', not BouncyCastle's. */
        @Override
        public String codePath(String... flags) {
            return "Java (C2 JIT)";
        }

        @Override
        public void context(Signature signer, byte[] context) throws Exception {
            signer.setParameter(new ContextParameterSpec(context));
        }

        /** Its keys are objects holding the decoded key (their encoding carries seed and
         * expanded key both, so a bare expanded key is not imported through the JCA). */
        @Override
        public KeyForm keyForm(PrivateKey sample, int expandedSize, int seedSize) {
            return new KeyForm("object", expandedSize, null);
        }

        @Override
        public String deterministicEcdsa() {
            return "SHA256withECDDSA";
        }

        /** As BouncyCastle's JSSE (JcaTlsCrypto) decodes a key share: an X.509
         * SubjectPublicKeyInfo around the raw key. */
        @Override
        public PublicKey x25519(KeyFactory factory, byte[] raw, byte[] spkiHeader) throws Exception {
            byte[] encoded = Arrays.copyOf(spkiHeader, spkiHeader.length + raw.length);
            System.arraycopy(raw, 0, encoded, spkiHeader.length, raw.length);
            return factory.generatePublic(new X509EncodedKeySpec(encoded));
        }

        /** javax.crypto.KEM where the JDK has it (21 and newer), else the provider's own JCA
         * KEM, a KeyGenerator given the key and, to decapsulate, the ciphertext. */
        @Override
        public Kem kem(String algorithm) throws Exception {
            try {
                return super.kem(algorithm);
            } catch (UnsupportedOperationException noKemClass) {
                KeyGenerator generator = KeyGenerator.getInstance(algorithm, provider);
                return new Kem() {
                    @Override
                    public byte[][] encapsulate(PublicKey key, SecureRandom random) throws Exception {
                        KEMGenerateSpec spec = new KEMGenerateSpec(key, "AES", 256);
                        if (random == null) {
                            generator.init(spec);
                        } else {
                            generator.init(spec, random);
                        }
                        SecretKeyWithEncapsulation secret = (SecretKeyWithEncapsulation) generator.generateKey();
                        return new byte[][] {secret.getEncapsulation(), secret.getEncoded()};
                    }

                    @Override
                    public byte[] decapsulate(PrivateKey key, byte[] ciphertext) throws Exception {
                        generator.init(new KEMExtractSpec(key, ciphertext, "AES", 256));
                        return generator.generateKey().getEncoded();
                    }
                };
            }
        }
    }
}
