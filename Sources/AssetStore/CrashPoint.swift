import Synchronization

/// Named points in the install, update and remove paths where a crash test
/// can have the process killed, to show that a writer killed at any of them
/// leaves a store that opens, verifies clean, and holds the old version, the
/// new one, or none.
///
/// The library only reports the points: each `hit` calls the handler a test
/// program installed with ``setHandler(_:)``, and does nothing else. Nothing
/// here reads the environment or kills; the test helper
/// (`Tests/assetpack-testhelper`) installs a handler that does. Without a
/// handler a point costs one load and one branch. docs/coordination.md lists
/// every point.
package enum CrashPoint {
    /// The handler each point calls.
    package typealias Handler = @Sendable (StaticString) -> Void

    /// Whether a handler is installed: the only thing an un-hooked point
    /// reads. Relaxed is enough: the handler itself is read under the lock.
    private static let armed = Atomic<Bool>(false)
    /// The handler, in a box: a function value kept in the generic `Mutex`
    /// directly is re-wrapped in reabstraction thunks each time `withLock`
    /// hands it out and takes it back, so that after tens of thousands of
    /// points it was a chain of thunks whose release overflowed the stack.
    private static let handler = Mutex<Box?>(nil)

    private final class Box: Sendable {
        let call: Handler
        init(_ call: @escaping Handler) { self.call = call }
    }

    /// Installs `handler`, called with the point's name every time a point
    /// is passed, on the thread passing it; `nil` removes it. For test
    /// programs only.
    package static func setHandler(_ handler: Handler?) {
        let box = handler.map(Box.init)
        self.handler.withLock { $0 = box }
        armed.store(handler != nil, ordering: .relaxed)
    }

    /// Calls the installed handler, if any, with this point's name.
    @inline(__always)
    static func hit(_ name: StaticString) {
        guard armed.load(ordering: .relaxed) else { return }
        report(name)
    }

    @inline(never)
    private static func report(_ name: StaticString) {
        // Called outside the lock: the handler may not return (it kills).
        let current = handler.withLock { $0 }
        current?.call(name)
    }
}
