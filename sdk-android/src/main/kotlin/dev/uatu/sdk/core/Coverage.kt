package dev.uatu.sdk.core

/**
 * Where coverage probes come from: an instrumented build hands the SDK one of
 * these; without it, STATE has no `coverage` field ("this build has no coverage").
 */
fun interface CoverageSource {
    /** The ids of the probes hit since the previous call (each once). */
    fun drainHits(): Collection<String>
}

/** A ready [CoverageSource]: instrumentation calls [hit] with a probe id. */
class CoverageProbes : CoverageSource {
    private val hits = LinkedHashSet<String>()

    fun hit(probe: String) {
        synchronized(hits) { hits += probe }
    }

    override fun drainHits(): List<String> = synchronized(hits) { hits.toList().also { hits.clear() } }
}
