package pqbench.stacks;

import java.security.SecureRandom;

/**
 * A SecureRandom that hands out given bytes, in order, and fails when they run out. It feeds
 * a FIPS 203/204 input (d || z, m, xi) or an RFC 7748/8032 private key to a library whose API
 * only takes randomness: the technique the JDK's own ACVP tests use. A library that draws a
 * different number of bytes, or in another order, fails the known answers loudly instead of
 * passing wrongly.
 */
public final class FixedRandom extends SecureRandom {
    private static final long serialVersionUID = 1L;
    private final byte[] bytes;
    private int used;

    public FixedRandom(byte[] bytes) {
        super(new byte[0]);
        this.bytes = bytes.clone();
    }

    @Override
    public synchronized void nextBytes(byte[] out) {
        if (used + out.length > bytes.length) {
            throw new IllegalStateException("the library drew " + (used + out.length)
                    + " bytes of randomness where the known input has " + bytes.length);
        }
        System.arraycopy(bytes, used, out, 0, out.length);
        used += out.length;
    }

    @Override
    public byte[] generateSeed(int count) {
        byte[] out = new byte[count];
        nextBytes(out);
        return out;
    }

    @Override
    public synchronized void setSeed(long seed) {
        // SecureRandom's constructor calls this; the bytes given are the only source.
    }

    @Override
    public synchronized void setSeed(byte[] seed) {
        // likewise
    }

    /** Whether every byte was drawn (a library that drew fewer did not use the input). */
    public synchronized boolean exhausted() {
        return used == bytes.length;
    }
}
