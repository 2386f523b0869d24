package pqbench.stacks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The JVM this worker runs on, as the runtime reports itself (never hand-written). */
public final class JvmRuntime {
    private JvmRuntime() {
    }

    /** For example "OpenJDK 64-Bit Server VM 25.0.3+9-LTS (Eclipse Adoptium Temurin-25.0.3+9)
     * linux/amd64". */
    public static String describe() {
        String vendorVersion = System.getProperty("java.vendor.version");
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                + " (" + System.getProperty("java.vm.vendor")
                + (vendorVersion == null ? "" : " " + vendorVersion) + ") "
                + System.getProperty("os.name").toLowerCase() + "/" + System.getProperty("os.arch");
    }

    /** The JDK's version as its providers carry it: the runtime version. */
    public static String version() {
        return System.getProperty("java.runtime.version");
    }

    /** The feature release (17, 21, 25). */
    public static int feature() {
        return Runtime.version().feature();
    }

    /** Options kept as they are: heap and stack sizes, HotSpot's flags, numeric or boolean
     * settings, the interpreter and JIT modes, assertions, verbose switches (what they change
     * is the point, and they hold no free text). */
    private static final Pattern KEPT = Pattern.compile(
            "-X(?:ms|mx|ss|mn)\\d+[kKmMgGtT]?"
            + "|-XX:[+-][A-Za-z][A-Za-z0-9_]*"
            + "|-XX:[A-Za-z][A-Za-z0-9_]*=(?:\\d+(?:\\.\\d+)?[kKmMgGtT%]?|true|false)"
            + "|-X(?:int|comp|mixed|batch|rs|noclassgc|share:(?:auto|on|off))"
            + "|-(?:server|client|ea|da|esa|dsa|enableassertions|disableassertions|enablesystemassertions"
            + "|disablesystemassertions)"
            + "|-verbose(?::(?:gc|class|jni|module))?");
    private static final Pattern PROPERTY = Pattern.compile("-D([A-Za-z0-9_.$-]+)(=.*)?", Pattern.DOTALL);
    private static final Pattern NAMED = Pattern.compile("-XX:[A-Za-z][A-Za-z0-9_]*=|--?[A-Za-z][A-Za-z0-9_.+-]*[:=]");
    private static final String MASK = "***";

    /** The JVM options this process was started with, as pqbench may store them: what they
     * change (heap, collector, flags) and never what a user's JAVA_TOOL_OPTIONS or
     * _JAVA_OPTIONS carried as a value (a system property keeps its name, -Dname=***;
     * anything else at most its option's name). pqbench applies the same rule again to
     * what it reads. */
    public static String options() {
        List<String> arguments = ManagementFactory.getRuntimeMXBean().getInputArguments();
        List<String> shown = new ArrayList<>();
        for (String argument : arguments) {
            for (String word : argument.trim().split("\\s+")) {
                if (!word.isEmpty()) {
                    shown.add(shown(word));
                }
            }
        }
        return String.join(" ", shown);
    }

    static String shown(String option) {
        if (KEPT.matcher(option).matches()) {
            return option;
        }
        Matcher property = PROPERTY.matcher(option);
        if (property.matches()) {
            return "-D" + property.group(1) + (property.group(2) == null ? "" : "=" + MASK);
        }
        Matcher named = NAMED.matcher(option);
        if (named.lookingAt()) {
            return named.group() + MASK;
        }
        return MASK;
    }

    /** A HotSpot flag's value ("true", "false", a number), null where the JVM has no such flag
     * or does not say. Diagnostic flags are readable too. */
    public static String vmFlag(String name) {
        try {
            com.sun.management.HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            return hotspot == null ? null : hotspot.getVMOption(name).getValue();
        } catch (IllegalArgumentException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
    }
}
