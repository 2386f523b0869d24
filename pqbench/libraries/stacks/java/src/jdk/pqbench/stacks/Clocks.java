package pqbench.stacks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/**
 * The CPU clocks of a round.
 *
 * <p>Thread CPU time is {@link ThreadMXBean#getCurrentThreadCpuTime()}
 * (CLOCK_THREAD_CPUTIME_ID, nanoseconds). Process CPU time is NOT read from
 * com.sun.management.OperatingSystemMXBean#getProcessCpuTime: on Linux HotSpot computes it
 * from times(2), in clock ticks of 10 ms, so a round of a few milliseconds would report a
 * process time below its own thread's. Instead, on Linux, it is this thread's precise CPU
 * time plus every other thread's from /proc/self/task/TID/schedstat (the scheduler's
 * nanosecond runtime: JIT compiler, collector and VM threads included, which Java's thread
 * list hides). A snapshot keeps each thread's figure, so a round's process time is the sum of
 * per-thread differences: a thread that starts in the round counts from zero, one that ends
 * in it counts nothing (a lower bound, never a negative), and the process figure can never be
 * below the thread figure. Elsewhere the operating system bean is the fallback.
 */
public final class Clocks {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final Path TASKS = Paths.get("/proc/self/task");

    private final String ownTask;
    private final boolean perTask;

    public Clocks() {
        if (THREADS.isCurrentThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
        String own = null;
        try {
            // /proc/thread-self -> "PID/task/TID"
            Path link = Files.readSymbolicLink(Paths.get("/proc/thread-self"));
            own = link.getFileName().toString();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            own = null;
        }
        this.ownTask = own;
        this.perTask = own != null && Files.isReadable(TASKS.resolve(own).resolve("schedstat"));
    }

    /** Which process clock is read, for the record. */
    public String processClock() {
        return perTask ? "this thread's CPU time + /proc/self/task/*/schedstat"
                : "OperatingSystemMXBean.getProcessCpuTime";
    }

    /** The calling thread's CPU time in nanoseconds. */
    public long thread() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** A reading of the process clock. */
    public static final class Snapshot {
        final long own;
        final Map<String, Long> others;

        Snapshot(long own, Map<String, Long> others) {
            this.own = own;
            this.others = others;
        }
    }

    /** The process clock at the start of a round: other threads first, this thread last. */
    public Snapshot processStart() {
        if (!perTask) {
            return new Snapshot(osProcessTime(), null);
        }
        Map<String, Long> others = otherTasks();
        return new Snapshot(thread(), others);
    }

    /** The process clock at the end of a round: this thread first, other threads last, so
     * the window of this thread's share contains the round's thread-clock window. */
    public Snapshot processEnd() {
        if (!perTask) {
            return new Snapshot(osProcessTime(), null);
        }
        long own = thread();
        return new Snapshot(own, otherTasks());
    }

    /** The process CPU nanoseconds between two snapshots. */
    public static long between(Snapshot start, Snapshot end) {
        long total = end.own - start.own;
        if (end.others == null || start.others == null) {
            return total;
        }
        for (Map.Entry<String, Long> task : end.others.entrySet()) {
            long before = start.others.getOrDefault(task.getKey(), 0L);
            total += Math.max(0L, task.getValue() - before);
        }
        return total;
    }

    private Map<String, Long> otherTasks() {
        Map<String, Long> runtimes = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String id = task.getFileName().toString();
                if (id.equals(ownTask)) {
                    continue;
                }
                try {
                    String stat = new String(Files.readAllBytes(task.resolve("schedstat")),
                            StandardCharsets.US_ASCII);
                    int space = stat.indexOf(' ');
                    runtimes.put(id, Long.parseLong(space < 0 ? stat.trim() : stat.substring(0, space)));
                } catch (IOException | NumberFormatException ended) {
                    // the thread ended between the listing and the read: it counts nothing
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/task: " + e.getMessage(), e);
        }
        return runtimes;
    }

    private static long osProcessTime() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }
}
