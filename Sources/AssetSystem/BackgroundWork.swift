internal import CAssetShim
#if canImport(Glibc)
import Glibc
#endif

/// Work that gives way to everything else on the machine: it runs on a
/// thread of its own at nice 19 under `SCHED_BATCH`. Beside a thread of
/// normal priority it gets about 1.5 % of a CPU (the weights of nice 19 and
/// nice 0 are 15 and 1024), and waking up it never preempts one, so a
/// reader sharing a CPU with it keeps the CPU; on an idle CPU it runs at
/// full speed. (The idle class, `SCHED_IDLE`, gives way further — a
/// weight of 3 — and was measured to starve a small install for minutes
/// while the test suite kept both CPUs busy.)
///
/// A thread cannot raise its priority again without privilege, and the
/// threads it starts inherit it. So the work gets a thread that ends with
/// it, and code that may run on such a thread hands nothing to Dispatch
/// (whose pool would start a worker from it, and keep that worker at
/// background priority for unrelated work): it checks ``isCurrent`` and
/// does the job in place instead.
public enum BackgroundWork {
    /// Whether the calling thread runs at background priority: nice 19, or
    /// the idle class (`SCHED_IDLE`) a caller may have chosen itself.
    public static var isCurrent: Bool { cas_thread_is_background() == 1 }

    /// The calling thread's scheduling policy and nice value
    /// (`sched_getattr`): for tests and diagnostics.
    public static var currentPriority: (policy: Int32, nice: Int32) {
        var policy: Int32 = 0, nice: Int32 = 0
        cas_thread_priority(&policy, &nice)
        return (policy, nice)
    }

    /// `SCHED_BATCH`, as ``currentPriority`` reports it.
    public static let batchPolicy: Int32 = 3

    /// The calling thread's kernel thread ID (`gettid`).
    public static var threadID: Int32 { cas_gettid() }

    /// Runs `body` on a new thread at background priority and waits for it;
    /// returns what it returns, throws what it throws. When no thread can
    /// be started, or the calling thread is at background priority
    /// already, `body` runs on the calling thread.
    public static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try body() }
        let outcome: Result<T, E>? = withoutActuallyEscaping(body) { escaping in
            let job = Job { Result { () throws(E) -> T in try escaping() } }
            return job.start() ? job.join() : nil
        }
        return try (outcome ?? Result { () throws(E) -> T in try body() }).get()
    }

    /// One run of ``run(_:)``: the closure and, once the thread ends, its
    /// result. The caller reads the result only after `pthread_join`, so
    /// the two threads never touch it at once.
    fileprivate final class Job<T, E: Error>: Runnable, @unchecked Sendable {
        private let work: () -> Result<T, E>
        private var result: Result<T, E>?
        private var thread = pthread_t()

        init(_ work: @escaping () -> Result<T, E>) { self.work = work }

        func start() -> Bool {
            let context = Unmanaged.passRetained(self as AnyObject).toOpaque()
            let entry: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
                let object = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue()
                _ = cas_thread_enter_background()
                (object as! Runnable).runOnce()
                return nil
            }
            guard pthread_create(&thread, nil, entry, context) == 0 else {
                Unmanaged<AnyObject>.fromOpaque(context).release()
                return false
            }
            return true
        }

        func join() -> Result<T, E>? {
            pthread_join(thread, nil)
            return result
        }

        func runOnce() { result = work() }
    }
}

/// Lets the thread entry, which cannot be generic, run a ``BackgroundWork``
/// job.
private protocol Runnable: AnyObject { func runOnce() }
