import org.apache.jmeter.control.LoopController;
import org.apache.jmeter.engine.StandardJMeterEngine;
import org.apache.jmeter.protocol.http.sampler.HTTPSamplerProxy;
import org.apache.jmeter.reporters.ResultCollector;
import org.apache.jmeter.testelement.TestPlan;
import org.apache.jmeter.threads.ThreadGroup;
import org.apache.jmeter.timers.ConstantTimer;
import org.apache.jmeter.util.JMeterUtils;
import org.apache.jorphan.collections.HashTree;

// Runs a JMeter 2.13 test plan built in code (Debian's jmeter cannot load
// .jmx files on bookworm: its xstream forbids JMeter's classes).
// Usage: RunPlan OUT.jtl PRINT_FIELD_NAMES(true|false)
public class RunPlan {
    static HTTPSamplerProxy get(String name, int port, String path) {
        HTTPSamplerProxy s = new HTTPSamplerProxy();
        s.setName(name);
        s.setDomain("127.0.0.1");
        s.setPort(port);
        s.setPath(path);
        s.setMethod("GET");
        s.setUseKeepAlive(true);
        return s;
    }

    public static void main(String[] args) throws Exception {
        JMeterUtils.setJMeterHome("/usr/share/jmeter");
        JMeterUtils.loadJMeterProperties("/usr/share/jmeter/bin/jmeter.properties");
        JMeterUtils.setProperty("jmeter.save.saveservice.print_field_names", args[1]);
        JMeterUtils.initLogging();
        JMeterUtils.initLocale();

        LoopController loop = new LoopController();
        loop.setLoops(3);
        loop.setFirst(true);
        loop.initialize();
        ThreadGroup tg = new ThreadGroup();
        tg.setName("probe");
        tg.setNumThreads(1);
        tg.setRampUp(0);
        tg.setSamplerController(loop);
        ConstantTimer pause = new ConstantTimer();
        pause.setDelay("200");

        HashTree tree = new HashTree();
        TestPlan plan = new TestPlan("memdiag latency fixture");
        HashTree planTree = tree.add(plan);
        HashTree tgTree = planTree.add(tg);
        tgTree.add(get("hello", 18931, "/hello.txt"));
        tgTree.add(get("missing", 18931, "/missing"));
        tgTree.add(get("closed", 18939, "/closed"));
        tgTree.add(pause);
        ResultCollector rc = new ResultCollector();
        rc.setFilename(args[0]);
        planTree.add(rc);

        StandardJMeterEngine engine = new StandardJMeterEngine();
        engine.configure(tree);
        engine.run();
        System.exit(0);
    }
}
