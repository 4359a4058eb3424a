import Foundation
import Synchronization

/// Polls `condition` until it holds or `timeout` seconds pass; whether it held.
@discardableResult
package func eventually(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(2_000)
    }
}

/// A value a test and the threads or callbacks it starts share.
package final class Shared<T: Sendable>: Sendable {
    private let mutex: Mutex<T>
    package init(_ value: T) { mutex = Mutex(value) }
    package func withLock<R>(_ body: (inout T) -> R) -> R { mutex.withLock { body(&$0) } }
}
