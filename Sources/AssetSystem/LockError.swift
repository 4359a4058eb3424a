/// Why a ``FileLock`` was not taken.
public enum LockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process held the lock for longer than the wait allowed.
    case timedOut(LockTimeout)
    /// Opening the lock file or locking it failed (`ELOOP` for a symlink).
    case system(Errno)

    public var description: String {
        switch self {
        case .timedOut(let t): return t.description
        case .system(let e): return e.description
        }
    }
}

/// A lock that another process held for longer than a wait allowed: which
/// one, how long the wait lasted and who held it.
public struct LockTimeout: Sendable, Equatable, CustomStringConvertible {
    /// What the lock is for, in words: "the install lock of 'com.example.Pack'",
    /// "the container lock"; "the lock" when the taker did not say.
    public var lock: String
    /// The lock file.
    public let path: String
    /// How long the wait lasted, in seconds; 0 for a lock only tried
    /// (``FileLock/Wait/none``).
    public let seconds: Double
    /// Who held it when the wait ended, as far as this process can see.
    public let holder: LockHolder

    public init(lock: String = "the lock", path: String, seconds: Double, holder: LockHolder) {
        self.lock = lock
        self.path = path
        self.seconds = seconds
        self.holder = holder
    }

    /// The same timeout, saying what the lock is for.
    public func named(_ lock: String) -> LockTimeout {
        var copy = self
        copy.lock = lock
        return copy
    }

    /// "timed out after 10 s waiting for the install lock of 'P'
    /// (/c/locks/packs/P.lock), held by pid 1234"; for a lock only tried,
    /// "the install lock of 'P' (/c/locks/packs/P.lock) is held by another
    /// process".
    public var description: String {
        let holder = holder.description
        if seconds == 0 {
            return "\(lock) (\(path)) is \(holder.isEmpty ? "held by another process" : holder)"
        }
        return "timed out after \(Self.format(seconds)) s waiting for \(lock) (\(path))" + (holder.isEmpty ? "" : ", " + holder)
    }

    /// `seconds` without a fraction when it has none ("10", "0.3").
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int64(seconds)) : String(seconds)
    }
}
