package pqbench.stacks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
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

/**
 * A plain benchmark of the JDK's providers through the documented JCA, without the worker:
 * the reference that pqbench's fidelity benchmark pairs with the {@code java} rows.
 *
 * <p>{@code java OPTIONS -cp CLASSES pqbench.stacks.Reference ALG OPERATION SECONDS [ROUNDS]}
 * prints one JSON line per round: {@code {"alg", "operation", "ops", "wall_ns",
 * "thread_cpu_ns"}}. Each round is the simplest loop: one operation per iteration,
 * System.nanoTime read after every call, a byte of each result folded into a volatile
 * field. The operation is the one the worker times (the received public key decoded by each
 * call, a Decapsulator per decapsulation, 64 rotating messages), written directly against
 * the JCA; only javax.crypto.KEM is reached through {@link KemApi}, which this class shares
 * with the worker so the sources compile for Java 17.
 *
 * <p>With ROUNDS {@code -} it runs one round each time a line arrives on stdin (the
 * line holds that round's seconds; a blank one means SECONDS) and exits when stdin closes:
 * one JVM, warmed once, serves every round of a fidelity comparison, as one worker does.
 */
public final class Reference {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    static volatile int sink;

    private interface Call {
        int run() throws Exception;
    }

    private Reference() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3 || args.length > 4) {
            System.err.println("usage: pqbench.stacks.Reference ALG OPERATION SECONDS [ROUNDS|-]");
            System.exit(2);
        }
        String alg = args[0];
        String operation = args[1];
        double seconds = Double.parseDouble(args[2]);
        boolean served = args.length == 4 && args[3].equals("-");
        int rounds = args.length == 4 && !served ? Integer.parseInt(args[3]) : 1;
        Call call = call(alg, operation);
        if (call == null) {
            System.err.println("the JDK reference has no " + alg + " " + operation);
            System.exit(2);
        }
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (int r = 0; served || r < rounds; r++) {
            double asked = seconds;
            if (served) {
                String line = input.readLine();
                if (line == null) {
                    break;
                }
                asked = line.isBlank() ? seconds : Double.parseDouble(line.trim());
            }
            long budget = (long) (asked * 1e9);
            long cpu = THREADS.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            long ops = 0;
            int folded = 0;
            while (System.nanoTime() - start < budget) {
                folded ^= call.run();
                ops++;
            }
            long wall = System.nanoTime() - start;
            long thread = THREADS.getCurrentThreadCpuTime() - cpu;
            sink ^= folded;
            System.out.println("{\"alg\":\"" + alg + "\",\"operation\":\"" + operation + "\",\"ops\":" + ops
                    + ",\"wall_ns\":" + wall + ",\"thread_cpu_ns\":" + thread + "}");
            System.out.flush();
        }
    }

    private static byte[][] messages() {
        byte[][] messages = new byte[64][32];
        SecureRandom random = new SecureRandom();
        for (byte[] m : messages) {
            random.nextBytes(m);
        }
        return messages;
    }

    private static Call call(String alg, String operation) throws Exception {
        if (alg.startsWith("ML-KEM-")) {
            KeyPairGenerator generator = KeyPairGenerator.getInstance(alg);
            KeyPair pair = generator.generateKeyPair();
            byte[] encoded = pair.getPublic().getEncoded();
            KeyFactory factory = KeyFactory.getInstance("ML-KEM");
            Object kem = KemApi.getInstance("ML-KEM");
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
            KeyPairGenerator generator = KeyPairGenerator.getInstance(ecdsa ? "EC" : alg);
            if (ecdsa) {
                generator.initialize(new ECGenParameterSpec("secp256r1"));
            }
            KeyPair pair = generator.generateKeyPair();
            String family = ecdsa ? "SHA256withECDSA" : alg.equals("Ed25519") ? "Ed25519" : "ML-DSA";
            Signature signer = Signature.getInstance(family);
            Signature verifier = Signature.getInstance(family);
            byte[][] messages = messages();
            byte[][] signatures = new byte[64][];
            for (int i = 0; i < 64; i++) {
                signer.initSign(pair.getPrivate());
                signer.update(messages[i]);
                signatures[i] = signer.sign();
            }
            KeyFactory factory = KeyFactory.getInstance(ecdsa ? "EC" : alg.equals("Ed25519") ? "Ed25519" : "ML-DSA");
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
            KeyPairGenerator generator = KeyPairGenerator.getInstance(x25519 ? "X25519" : "EC");
            if (!x25519) {
                generator.initialize(new ECGenParameterSpec("secp256r1"));
            }
            KeyPair mine = generator.generateKeyPair();
            PublicKey theirs = generator.generateKeyPair().getPublic();
            KeyFactory factory = KeyFactory.getInstance(x25519 ? "X25519" : "EC");
            KeyAgreement agreement = KeyAgreement.getInstance(x25519 ? "X25519" : "ECDH");
            switch (operation) {
                case "keygen":
                    return () -> generator.generateKeyPair().getPublic().getEncoded()[20];
                case "derive": {
                    BigInteger u = x25519 ? ((XECPublicKey) theirs).getU() : null;
                    ECPublicKeySpec point = x25519 ? null
                            : new ECPublicKeySpec(((ECPublicKey) theirs).getW(), ((ECPublicKey) theirs).getParams());
                    return () -> {
                        PublicKey peer = x25519
                                ? factory.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, u))
                                : factory.generatePublic(point);
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
