#if canImport(Glibc)
import Glibc
#endif

/// One `Value` per thread, made on first use and released at thread exit
/// (a pthread key with a destructor). Only its own thread touches a value,
/// so values need no lock; the key itself never changes.
final class ThreadLocal<Value: AnyObject>: Sendable {
    private let key: pthread_key_t
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { value in
        // Any class instance is released the same way, whatever its type.
            if let value { Unmanaged<AnyObject>.fromOpaque(value).release() }
        }
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        self.key = key
        self.make = make
    }

    /// This thread's value, made now if it has none.
    var current: Value {
        if let value = existing { return value }
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value).toOpaque())
        return value
    }

    /// This thread's value if it has one.
    var existing: Value? {
        pthread_getspecific(key).map { Unmanaged<Value>.fromOpaque($0).takeUnretainedValue() }
    }
}
