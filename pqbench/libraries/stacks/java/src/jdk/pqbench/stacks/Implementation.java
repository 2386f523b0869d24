package pqbench.stacks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One implementation the JVM worker serves (`--impl NAME`); its constructor fills in what it
 * offers and the library versions behind it. */
public abstract class Implementation {
    /** The algorithms this implementation offers on this JVM, in pqbench's canonical names. */
    protected final List<Algorithm> algorithms = new ArrayList<>();

    /** Every library version that matters, read from the runtime or the jar (never
     * hand-written); each library named by an algorithm is a key. */
    protected final Map<String, String> libraries = new LinkedHashMap<>();

    public final List<Algorithm> algorithms() {
        return algorithms;
    }

    public final Map<String, String> libraries() {
        return libraries;
    }

    /** The runtime this implementation needs, in words, for the hello (field "needs"). */
    public abstract String needs();
}
