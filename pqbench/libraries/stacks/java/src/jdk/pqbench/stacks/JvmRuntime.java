package pqbench.stacks;

import java.lang.management.ManagementFactory;
import java.util.List;

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

    /** The JVM options this process was started with (heap, collector), for the record. */
    public static String options() {
        List<String> arguments = ManagementFactory.getRuntimeMXBean().getInputArguments();
        return String.join(" ", arguments);
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
