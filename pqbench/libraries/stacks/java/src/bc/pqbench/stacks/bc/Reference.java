package pqbench.stacks.bc;

import org.bouncycastle.jce.provider.BouncyCastleProvider;

import pqbench.stacks.ReferenceRounds;

/**
 * A plain benchmark of the BouncyCastle provider through the documented JCA, without the
 * worker: the reference that pqbench's fidelity benchmark pairs with the
 * {@code bouncycastle} rows. The loops are the JDK reference's ({@code pqbench.stacks.Reference}),
 * each engine asked of this provider ({@code getInstance(name, provider)}).
 *
 * <p>{@code java OPTIONS -cp CLASSES:LIB/* pqbench.stacks.bc.Reference ALG OPERATION SECONDS
 * [ROUNDS|-]} times rounds as {@link ReferenceRounds} says.
 */
public final class Reference {
    private Reference() {
    }

    public static void main(String[] args) throws Exception {
        BouncyCastleProvider provider = new BouncyCastleProvider();
        ReferenceRounds.main("pqbench.stacks.bc.Reference", "BouncyCastle", args,
                (alg, operation) -> pqbench.stacks.Reference.call(provider, alg, operation));
    }
}
