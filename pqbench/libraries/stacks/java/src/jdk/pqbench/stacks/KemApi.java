package pqbench.stacks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.security.PrivateKey;
import java.security.Provider;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.AlgorithmParameterSpec;
import javax.crypto.SecretKey;

/**
 * javax.crypto.KEM (JDK 21, JEP 452), reached through method handles so the worker compiles
 * for Java 17 and the BouncyCastle implementation runs on JDKs that have no KEM class. The
 * handles are constants: the JIT inlines them like direct calls, so the timed loop pays no
 * reflection.
 */
final class KemApi {
    private static final MethodHandle GET_INSTANCE;
    private static final MethodHandle GET_INSTANCE_FROM;
    private static final MethodHandle NEW_ENCAPSULATOR;
    private static final MethodHandle ENCAPSULATE;
    private static final MethodHandle KEY;
    private static final MethodHandle ENCAPSULATION;
    private static final MethodHandle NEW_DECAPSULATOR;
    private static final MethodHandle DECAPSULATE;
    /** Why javax.crypto.KEM is missing, null where it is present. */
    static final String MISSING;

    static {
        MethodHandle[] h = new MethodHandle[8];
        String missing = null;
        try {
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Class<?> kem = Class.forName("javax.crypto.KEM");
            Class<?> encapsulator = Class.forName("javax.crypto.KEM$Encapsulator");
            Class<?> encapsulated = Class.forName("javax.crypto.KEM$Encapsulated");
            Class<?> decapsulator = Class.forName("javax.crypto.KEM$Decapsulator");
            h[0] = lookup.findStatic(kem, "getInstance", MethodType.methodType(kem, String.class));
            h[1] = lookup.findVirtual(kem, "newEncapsulator", MethodType.methodType(encapsulator,
                    PublicKey.class, AlgorithmParameterSpec.class, SecureRandom.class));
            h[2] = lookup.findVirtual(encapsulator, "encapsulate", MethodType.methodType(encapsulated));
            h[3] = lookup.findVirtual(encapsulated, "key", MethodType.methodType(SecretKey.class));
            h[4] = lookup.findVirtual(encapsulated, "encapsulation", MethodType.methodType(byte[].class));
            h[5] = lookup.findVirtual(kem, "newDecapsulator", MethodType.methodType(decapsulator, PrivateKey.class));
            h[6] = lookup.findVirtual(decapsulator, "decapsulate", MethodType.methodType(SecretKey.class, byte[].class));
            h[7] = lookup.findStatic(kem, "getInstance", MethodType.methodType(kem, String.class, Provider.class));
            for (int i = 0; i < h.length; i++) {
                h[i] = h[i].asType(h[i].type().generic()); // every argument and result an Object
            }
        } catch (ReflectiveOperationException e) {
            missing = "javax.crypto.KEM needs JDK 21 or newer (this is " + JvmRuntime.version() + ")";
        }
        GET_INSTANCE = h[0];
        NEW_ENCAPSULATOR = h[1];
        ENCAPSULATE = h[2];
        KEY = h[3];
        ENCAPSULATION = h[4];
        NEW_DECAPSULATOR = h[5];
        DECAPSULATE = h[6];
        GET_INSTANCE_FROM = h[7];
        MISSING = missing;
    }

    private KemApi() {
    }

    /** The checked exceptions a KEM throws, rethrown as they are; others wrapped. */
    private static Exception rethrow(Throwable t) {
        if (t instanceof Exception) {
            return (Exception) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IllegalStateException(t);
    }

    static Object getInstance(String algorithm) throws Exception {
        try {
            return (Object) GET_INSTANCE.invokeExact((Object) algorithm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The KEM of one provider (null: the JDK's, in preference order). */
    static Object getInstance(String algorithm, Provider provider) throws Exception {
        if (provider == null) {
            return getInstance(algorithm);
        }
        try {
            return (Object) GET_INSTANCE_FROM.invokeExact((Object) algorithm, (Object) provider);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Encapsulates to {@code publicKey}: {ciphertext, shared secret}. */
    static byte[][] encapsulate(Object kem, PublicKey publicKey, SecureRandom random) throws Exception {
        try {
            Object encapsulator = (Object) NEW_ENCAPSULATOR.invokeExact(kem, (Object) publicKey, (Object) null, (Object) random);
            Object encapsulated = (Object) ENCAPSULATE.invokeExact(encapsulator);
            byte[] ciphertext = (byte[]) (Object) ENCAPSULATION.invokeExact(encapsulated);
            SecretKey key = (SecretKey) (Object) KEY.invokeExact(encapsulated);
            return new byte[][] {ciphertext, key.getEncoded()};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static byte[] decapsulate(Object kem, PrivateKey privateKey, byte[] ciphertext) throws Exception {
        try {
            Object decapsulator = (Object) NEW_DECAPSULATOR.invokeExact(kem, (Object) privateKey);
            SecretKey key = (SecretKey) (Object) DECAPSULATE.invokeExact(decapsulator, (Object) ciphertext);
            return key.getEncoded();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
