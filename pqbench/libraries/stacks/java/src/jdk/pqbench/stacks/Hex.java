package pqbench.stacks;

/** Byte strings as the protocol writes them: lowercase hex (either case is read). */
public final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    private Hex() {
    }

    public static String encode(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = DIGITS[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = DIGITS[bytes[i] & 0xf];
        }
        return new String(out);
    }

    /** The bytes of a hex string; null when it is not hex (odd length or another character). */
    public static byte[] decodeOrNull(String hex) {
        if (hex.length() % 2 != 0) {
            return null;
        }
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int high = Character.digit(hex.charAt(2 * i), 16);
            int low = Character.digit(hex.charAt(2 * i + 1), 16);
            if (high < 0 || low < 0 || hex.charAt(2 * i) > 'f' || hex.charAt(2 * i + 1) > 'f') {
                return null;
            }
            out[i] = (byte) (high << 4 | low);
        }
        return out;
    }
}
