package pqbench.stacks;

import java.util.List;
import java.util.Map;

/** One implementation the JVM worker serves (`--impl NAME`). */
public interface Implementation {
    /** The algorithms this implementation offers on this JVM, in pqbench's canonical names. */
    List<Algorithm> algorithms();

    /** Every library version that matters, read from the runtime or the jar (never
     * hand-written); each library named by an algorithm is a key. */
    Map<String, String> libraries();

    /** The runtime this implementation needs, in words, for the hello (field "needs"). */
    String needs();
}
