package pqbench.stacks.bc;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.security.SecureRandom;

import org.bouncycastle.crypto.AsymmetricCipherKeyPairGenerator;
import org.bouncycastle.crypto.EncapsulatedSecretExtractor;
import org.bouncycastle.crypto.EncapsulatedSecretGenerator;
import org.bouncycastle.crypto.KeyGenerationParameters;
import org.bouncycastle.crypto.SecretWithEncapsulation;
import org.bouncycastle.crypto.Signer;
import org.bouncycastle.crypto.params.AsymmetricKeyParameter;

/**
 * BouncyCastle's lightweight ML-KEM and ML-DSA classes, wherever the release keeps them:
 * org.bouncycastle.pqc.crypto.mlkem / .mldsa up to 1.83, org.bouncycastle.crypto.{params,
 * generators, kems, signers} from 1.84 on (1.84 has both). Their names and the methods used
 * here are the same in both places, and each implements an interface that never moved
 * (AsymmetricCipherKeyPairGenerator, EncapsulatedSecretGenerator, EncapsulatedSecretExtractor,
 * Signer), so the worker compiles against any release from 1.79 and only constructors and a
 * few getters go through method handles. pqbench's {@code bisect} walks BouncyCastle releases
 * with it.
 */
final class Pqc {
    /** Where the classes were found: "org.bouncycastle.crypto" or "org.bouncycastle.pqc.crypto". */
    static final String LAYOUT;

    private static final MethodHandles.Lookup LOOKUP = MethodHandles.publicLookup();

    static {
        LAYOUT = present("org.bouncycastle.crypto.kems.MLKEMGenerator") ? "org.bouncycastle.crypto"
                : "org.bouncycastle.pqc.crypto";
    }

    private Pqc() {
    }

    private static boolean present(String name) {
        try {
            Class.forName(name);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** A class by its simple name: the new package (params, generators, kems, signers) or the
     * old one (mlkem, mldsa). */
    private static Class<?> find(String newPackage, String oldPackage, String simpleName) {
        String name = LAYOUT.equals("org.bouncycastle.crypto")
                ? "org.bouncycastle.crypto." + newPackage + "." + simpleName
                : "org.bouncycastle.pqc.crypto." + oldPackage + "." + simpleName;
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("this BouncyCastle has no " + name, e);
        }
    }

    private static MethodHandle constructor(Class<?> owner, Class<?>... parameters) {
        try {
            MethodHandle h = LOOKUP.findConstructor(owner, MethodType.methodType(void.class, parameters));
            return h.asType(h.type().generic()); // every argument and the result an Object
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("BouncyCastle's " + owner.getName() + " has no such constructor", e);
        }
    }

    private static MethodHandle getter(Class<?> owner, String name, Class<?> result) {
        try {
            MethodHandle h = LOOKUP.findVirtual(owner, name, MethodType.methodType(result));
            return h.asType(MethodType.methodType(result, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("BouncyCastle's " + owner.getName() + " has no " + name, e);
        }
    }

    private static Object constant(Class<?> owner, String field) {
        try {
            return owner.getField(field).get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("BouncyCastle's " + owner.getName() + " has no " + field, e);
        }
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException) {
            return (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IllegalStateException(t);
    }

    /** What one ML-KEM or ML-DSA parameter set offers alike: keys from their encodings, a key
     * pair generator, and a private key's encoded public key. */
    abstract static class Scheme {
        final Object parameters;
        /** The private key class, for the handles a scheme adds. */
        final Class<?> privateClass;
        private final MethodHandle privateKey;   // (parameters, seed; or ML-KEM's expanded dk)
        private final MethodHandle publicKey;    // (parameters, encoded public key)
        private final MethodHandle generationParameters;
        private final MethodHandle keyPairGenerator;
        private final MethodHandle publicOf;
        private final MethodHandle encoded;

        /** prefix: "MLKEM" or "MLDSA"; oldPackage: its package up to 1.83 ("mlkem", "mldsa");
         * field: the parameter set's constant in the Parameters class ("ml_kem_768"). */
        Scheme(String prefix, String oldPackage, String field) {
            Class<?> parametersClass = find("params", oldPackage, prefix + "Parameters");
            privateClass = find("params", oldPackage, prefix + "PrivateKeyParameters");
            Class<?> publicClass = find("params", oldPackage, prefix + "PublicKeyParameters");
            parameters = constant(parametersClass, field);
            privateKey = constructor(privateClass, parametersClass, byte[].class);
            publicKey = constructor(publicClass, parametersClass, byte[].class);
            generationParameters = constructor(find("params", oldPackage, prefix + "KeyGenerationParameters"),
                    SecureRandom.class, parametersClass);
            keyPairGenerator = constructor(find("generators", oldPackage, prefix + "KeyPairGenerator"));
            publicOf = getter(privateClass, "getPublicKeyParameters", publicClass)
                    .asType(MethodType.methodType(Object.class, Object.class));
            encoded = getter(publicClass, "getEncoded", byte[].class);
        }

        final AsymmetricKeyParameter privateKey(byte[] encoding) {
            try {
                return (AsymmetricKeyParameter) (Object) privateKey.invokeExact(parameters, (Object) encoding);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        final AsymmetricKeyParameter publicKey(byte[] encoding) {
            try {
                return (AsymmetricKeyParameter) (Object) publicKey.invokeExact(parameters, (Object) encoding);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        final AsymmetricCipherKeyPairGenerator keyPairGenerator(SecureRandom random) {
            try {
                AsymmetricCipherKeyPairGenerator keys =
                        (AsymmetricCipherKeyPairGenerator) (Object) keyPairGenerator.invokeExact();
                keys.init((KeyGenerationParameters) (Object) generationParameters.invokeExact((Object) random, parameters));
                return keys;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        /** The encoded public key (ML-KEM's ek, ML-DSA's pk) of a private key. */
        final byte[] publicOf(AsymmetricKeyParameter privateKey) {
            try {
                return encoded((Object) publicOf.invokeExact((Object) privateKey));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        final byte[] encoded(Object publicKey) {
            try {
                return (byte[]) encoded.invokeExact(publicKey);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /** One ML-KEM parameter set: its encapsulation and decapsulation besides the keys. */
    static final class Kem extends Scheme {
        private final MethodHandle generator;    // (SecureRandom)
        private final MethodHandle extractor;    // (private key)
        private final MethodHandle internalEncapsulate;

        Kem(String field) {
            super("MLKEM", "mlkem", field);
            Class<?> generatorClass = find("kems", "mlkem", "MLKEMGenerator");
            generator = constructor(generatorClass, SecureRandom.class);
            extractor = constructor(find("kems", "mlkem", "MLKEMExtractor"), privateClass);
            try {
                MethodHandle h = LOOKUP.findVirtual(generatorClass, "internalGenerateEncapsulated",
                        MethodType.methodType(SecretWithEncapsulation.class, AsymmetricKeyParameter.class, byte[].class));
                internalEncapsulate = h.asType(MethodType.methodType(SecretWithEncapsulation.class, Object.class,
                        AsymmetricKeyParameter.class, byte[].class));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("this BouncyCastle's MLKEMGenerator has no internalGenerateEncapsulated", e);
            }
        }

        EncapsulatedSecretGenerator generator(SecureRandom random) {
            try {
                return (EncapsulatedSecretGenerator) (Object) generator.invokeExact((Object) random);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        EncapsulatedSecretExtractor extractor(AsymmetricKeyParameter privateKey) {
            try {
                return (EncapsulatedSecretExtractor) (Object) extractor.invokeExact((Object) privateKey);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        /** FIPS 203 ML-KEM.Encaps_internal with the given m. */
        SecretWithEncapsulation encapsulate(EncapsulatedSecretGenerator generator, AsymmetricKeyParameter publicKey,
                byte[] m) {
            try {
                return (SecretWithEncapsulation) internalEncapsulate.invokeExact((Object) generator, publicKey, m);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /** One ML-DSA parameter set: its signer besides the keys. */
    static final class Dsa extends Scheme {
        private final MethodHandle signer;

        Dsa(String field) {
            super("MLDSA", "mldsa", field);
            signer = constructor(find("signers", "mldsa", "MLDSASigner"));
        }

        Signer signer() {
            try {
                return (Signer) (Object) signer.invokeExact();
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }
}
