import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT delivered through Dispatch, never interrupting a
/// system call: for the commands that run until stopped (`daemon`, `serve`).
final class TerminationSignals {
    private var sources: [any DispatchSourceSignal] = []

    /// Ignores SIGTERM and SIGINT as signals and calls `handler` on a
    /// Dispatch queue when one arrives, until the value goes away.
    init(_ handler: @escaping @Sendable () -> Void) {
        for signal in [SIGTERM, SIGINT] {
            Glibc.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
    }

    deinit { sources.forEach { $0.cancel() } }
}
