package dev.uatu.sidecar.fakedevice

import org.junit.jupiter.api.extension.ExtensionContext
import org.junit.jupiter.api.extension.ParameterContext
import org.junit.jupiter.api.extension.ParameterResolver

/**
 * A real ADB server of the test class's own, on a free port: `@ExtendWith(AdbServerExtension::class)`
 * and an [AdbServerProcess] parameter (of the constructor or a test) receive it. It is
 * started for the class's first test that asks and stopped after its last test, on every
 * way out (JUnit closes what the class's store holds); other test classes, and other
 * programs on the machine, keep their servers.
 */
class AdbServerExtension : ParameterResolver {
    override fun supportsParameter(parameter: ParameterContext, context: ExtensionContext): Boolean =
        parameter.parameter.type == AdbServerProcess::class.java

    override fun resolveParameter(parameter: ParameterContext, context: ExtensionContext): AdbServerProcess =
        classContext(context).getStore(NAMESPACE)
            .getOrComputeIfAbsent(AdbServerProcess::class.java, { AdbServerProcess.start() }, AdbServerProcess::class.java)

    /** The test class's context: one server for all of its tests. */
    private fun classContext(context: ExtensionContext): ExtensionContext {
        var current = context
        while (current.testMethod.isPresent) current = current.parent.orElseThrow()
        return current
    }

    private companion object {
        val NAMESPACE: ExtensionContext.Namespace = ExtensionContext.Namespace.create(AdbServerExtension::class.java)
    }
}
