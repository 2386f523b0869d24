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

    /** One ML-KEM parameter set's classes and constructors. */
    static final class Kem {
        final Object parameters;
        private final MethodHandle privateKey;   // (parameters, seed or dk)
        private final MethodHandle publicKey;    // (parameters, ek)
        private final MethodHandle generationParameters;
        private final MethodHandle keyPairGenerator;
        private final MethodHandle generator;    // (SecureRandom)
        private final MethodHandle extractor;    // (private key)
        private final MethodHandle internalEncapsulate;
        private final MethodHandle publicOf;
        private final MethodHandle encoded;

        Kem(String field) {
            Class<?> parametersClass = find("params", "mlkem", "MLKEMParameters");
            Class<?> privateClass = find("params", "mlkem", "MLKEMPrivateKeyParameters");
            Class<?> publicClass = find("params", "mlkem", "MLKEMPublicKeyParameters");
            Class<?> generatorClass = find("kems", "mlkem", "MLKEMGenerator");
            parameters = constant(parametersClass, field);
            privateKey = constructor(privateClass, parametersClass, byte[].class);
            publicKey = constructor(publicClass, parametersClass, byte[].class);
            generationParameters = constructor(find("params", "mlkem", "MLKEMKeyGenerationParameters"),
                    SecureRandom.class, parametersClass);
            keyPairGenerator = constructor(find("generators", "mlkem", "MLKEMKeyPairGenerator"));
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
            publicOf = getter(privateClass, "getPublicKeyParameters", publicClass)
                    .asType(MethodType.methodType(Object.class, Object.class));
            encoded = getter(publicClass, "getEncoded", byte[].class);
        }

        AsymmetricKeyParameter privateKey(byte[] seedOrExpanded) {
            try {
                return (AsymmetricKeyParameter) (Object) privateKey.invokeExact(parameters, (Object) seedOrExpanded);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        AsymmetricKeyParameter publicKey(byte[] encoding) {
            try {
                return (AsymmetricKeyParameter) (Object) publicKey.invokeExact(parameters, (Object) encoding);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        AsymmetricCipherKeyPairGenerator keyPairGenerator(SecureRandom random) {
            try {
                AsymmetricCipherKeyPairGenerator keys =
                        (AsymmetricCipherKeyPairGenerator) (Object) keyPairGenerator.invokeExact();
                keys.init((KeyGenerationParameters) (Object) generationParameters.invokeExact((Object) random, parameters));
                return keys;
            } catch (Throwable t) {
                throw rethrow(t);
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

        /** The encoded public key (ek) of a private key. */
        byte[] publicOf(AsymmetricKeyParameter privateKey) {
            try {
                return encoded((Object) publicOf.invokeExact((Object) privateKey));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        byte[] encoded(Object publicKey) {
            try {
                return (byte[]) encoded.invokeExact(publicKey);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /** One ML-DSA parameter set's classes and constructors. */
    static final class Dsa {
        final Object parameters;
        private final MethodHandle privateKey;   // (parameters, seed)
        private final MethodHandle publicKey;    // (parameters, pk)
        private final MethodHandle generationParameters;
        private final MethodHandle keyPairGenerator;
        private final MethodHandle signer;
        private final MethodHandle publicOf;
        private final MethodHandle encoded;

        Dsa(String field) {
            Class<?> parametersClass = find("params", "mldsa", "MLDSAParameters");
            Class<?> privateClass = find("params", "mldsa", "MLDSAPrivateKeyParameters");
            Class<?> publicClass = find("params", "mldsa", "MLDSAPublicKeyParameters");
            parameters = constant(parametersClass, field);
            privateKey = constructor(privateClass, parametersClass, byte[].class);
            publicKey = constructor(publicClass, parametersClass, byte[].class);
            generationParameters = constructor(find("params", "mldsa", "MLDSAKeyGenerationParameters"),
                    SecureRandom.class, parametersClass);
            keyPairGenerator = constructor(find("generators", "mldsa", "MLDSAKeyPairGenerator"));
            signer = constructor(find("signers", "mldsa", "MLDSASigner"));
            publicOf = getter(privateClass, "getPublicKeyParameters", publicClass)
                    .asType(MethodType.methodType(Object.class, Object.class));
            encoded = getter(publicClass, "getEncoded", byte[].class);
        }

        AsymmetricKeyParameter privateKey(byte[] seed) {
            try {
                return (AsymmetricKeyParameter) (Object) privateKey.invokeExact(parameters, (Object) seed);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        AsymmetricKeyParameter publicKey(byte[] encoding) {
            try {
                return (AsymmetricKeyParameter) (Object) publicKey.invokeExact(parameters, (Object) encoding);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        AsymmetricCipherKeyPairGenerator keyPairGenerator(SecureRandom random) {
            try {
                AsymmetricCipherKeyPairGenerator keys =
                        (AsymmetricCipherKeyPairGenerator) (Object) keyPairGenerator.invokeExact();
                keys.init((KeyGenerationParameters) (Object) generationParameters.invokeExact((Object) random, parameters));
                return keys;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        Signer signer() {
            try {
                return (Signer) (Object) signer.invokeExact();
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        byte[] publicOf(AsymmetricKeyParameter privateKey) {
            try {
                return encoded((Object) publicOf.invokeExact((Object) privateKey));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        byte[] encoded(Object publicKey) {
            try {
                return (byte[]) encoded.invokeExact(publicKey);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }
}
