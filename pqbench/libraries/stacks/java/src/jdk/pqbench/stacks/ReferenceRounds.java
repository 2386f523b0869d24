package pqbench.stacks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;

/**
 * What both JVM references (the JDK's {@link Reference} and BouncyCastle's) do alike: read
 * {@code ALG OPERATION SECONDS [ROUNDS|-]}, time rounds of one operation and print one JSON
 * line per round: {@code {"alg", "operation", "ops", "wall_ns", "thread_cpu_ns"}}. Each
 * round is the simplest loop: one operation per iteration, System.nanoTime read after every
 * call, a byte of each result folded into a volatile field.
 *
 * <p>With ROUNDS {@code -} it runs one round each time a line arrives on stdin (the
 * line holds that round's seconds; a blank one means SECONDS) and exits when stdin closes:
 * one JVM, warmed once, serves every round of a fidelity comparison, as one worker does.
 */
public final class ReferenceRounds {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    static volatile int sink;

    /** One timed operation; it returns a byte of its result. */
    public interface Call {
        int run() throws Exception;
    }

    /** A reference's operations: the call for ALG OPERATION, its inputs made, or null. */
    public interface Calls {
        Call call(String alg, String operation) throws Exception;
    }

    private ReferenceRounds() {
    }

    /** Runs a reference: {@code mainClass} names it in the usage line, {@code library} in
     * the message for an operation it lacks. */
    public static void main(String mainClass, String library, String[] args, Calls calls) throws Exception {
        if (args.length < 3 || args.length > 4) {
            System.err.println("usage: " + mainClass + " ALG OPERATION SECONDS [ROUNDS|-]");
            System.exit(2);
        }
        String alg = args[0];
        String operation = args[1];
        double seconds = Double.parseDouble(args[2]);
        boolean served = args.length == 4 && args[3].equals("-");
        int rounds = args.length == 4 && !served ? Integer.parseInt(args[3]) : 1;
        Call call = calls.call(alg, operation);
        if (call == null) {
            System.err.println("the " + library + " reference has no " + alg + " " + operation);
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
}
