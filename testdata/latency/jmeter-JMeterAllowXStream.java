import java.lang.reflect.Field;
import java.lang.reflect.Method;

import com.thoughtworks.xstream.XStream;
import com.thoughtworks.xstream.security.AnyTypePermission;
import org.apache.commons.cli.avalon.CLArgsParser;
import org.apache.commons.cli.avalon.CLOptionDescriptor;
import org.apache.jmeter.JMeter;

// Runs Debian's JMeter 2.13 as `jmeter ARGS` would, after allowing its
// own classes in the XStream instances that load .jmx plans and XML
// results: XStream 1.4.18+ (bookworm has 1.4.20) denies every type
// unless told otherwise, and JMeter 2.13 predates that, so every plan
// fails with ForbiddenClassException: org.apache.jmeter.save.ScriptWrapper.
public class JMeterAllowXStream {
    public static void main(String[] args) throws Exception {
        JMeter jm = new JMeter();
        // Load jmeter.properties, user.properties, -J and -q first, as
        // JMeter.start does, so SaveService reads the same settings.
        Field opts = JMeter.class.getDeclaredField("options");
        opts.setAccessible(true);
        CLArgsParser p = new CLArgsParser(args, (CLOptionDescriptor[]) opts.get(null));
        Method init = JMeter.class.getDeclaredMethod("initializeProperties", CLArgsParser.class);
        init.setAccessible(true);
        init.invoke(jm, p);
        Class<?> ss = Class.forName("org.apache.jmeter.save.SaveService");
        for (String name : new String[] {"JMXSAVER", "JTLSAVER"}) {
            Field f = ss.getDeclaredField(name);
            f.setAccessible(true);
            ((XStream) f.get(null)).addPermission(AnyTypePermission.ANY);
        }
        jm.start(args);
    }
}
