internal import CAssetShim
internal import Dispatch
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

    /// On a thread at background priority that has run for
    /// ``wayInterval`` since it last gave way, gives its CPU to any thread
    /// waiting for it (`sched_yield`) and returns `true`; on any other
    /// thread, or sooner, returns `false` at once.
    ///
    /// Background work calls it as it goes: per member in the walks of an
    /// install or a verify, per piece of a copy or a hash (``ReadBehind``
    /// calls it for every walk over a mapping). A nice-19 thread that lands
    /// on a busy CPU — woken there by an I/O completion, say — gets it now
    /// and then, and the scheduler notices that it has had its share only
    /// at its next tick: traced, a background install held a reader's CPU
    /// for a whole tick (4 ms at `HZ=250`), with the other CPU idle. Giving
    /// way bounds that to about ``wayInterval``. Alone on its CPU, the
    /// thread yields to nobody and goes on (a system call every
    /// ``wayInterval``). Whether a thread is at background priority is
    /// learnt on its first call (``isCurrent``) and kept; a thread that
    /// enters the background through this type is known at once.
    @discardableResult
    public static func giveWay() -> Bool { cas_give_way(wayInterval) != 0 }

    /// How long background work runs between two chances it gives other
    /// threads: 200 µs, a tenth of the 2 ms a reader should ever wait.
    public static var wayInterval: UInt64 { 200_000 }

    /// Runs `work` later on the process's background thread: one thread at
    /// background priority, started on first use and kept for the life of
    /// the process, that runs what it is given in order. It is for releasing
    /// what is costly to release (a large mapping's `munmap`) off the thread
    /// that drops it. Not a Dispatch queue: Dispatch runs `.utility` work at
    /// nice 2, which preempts a reader on its CPU for as long as the work
    /// takes (traced: a reader stalled 2–5 ms while an 80 MB mapping was
    /// unmapped for it). On a thread at background priority already, or
    /// where the thread cannot be started, `work` runs in place at once.
    public static func later(_ work: @escaping @Sendable () -> Void) {
        if isCurrent { return work() }
        let context = Unmanaged.passRetained(Later(work)).toOpaque()
        let entry: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
            Unmanaged<Later>.fromOpaque(context!).takeRetainedValue().work()
        }
        if cas_background_submit(entry, context) != 0 {
            Unmanaged<Later>.fromOpaque(context).takeRetainedValue().work()
        }
    }

    /// The work of one ``later(_:)``, carried through C.
    private final class Later: Sendable {
        let work: @Sendable () -> Void
        init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    }

    /// Runs `body` on a new thread at background priority and waits for it;
    /// returns what it returns, throws what it throws. When no thread can
    /// be started, or the calling thread is at background priority
    /// already, `body` runs on the calling thread.
    public static func run<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try body() }
        let outcome: Result<T, E>? = withoutActuallyEscaping(body) { escaping in
            let job = Job { Result { () throws(E) -> T in try escaping() } }
            return job.startFromBackgroundThread() ? job.join() : nil
        }
        return try (outcome ?? Result { () throws(E) -> T in try body() }).get()
    }

    /// One run of ``run(_:)``: the closure and, once the thread ends, its
    /// result. The caller reads the result only after `pthread_join`, so
    /// the two threads never touch it at once; it reads `thread` only after
    /// the semaphore the starting thread signals.
    fileprivate final class Job<T, E: Error>: Runnable, @unchecked Sendable {
        private let work: () -> Result<T, E>
        private var result: Result<T, E>?
        private var thread = pthread_t()

        init(_ work: @escaping () -> Result<T, E>) { self.work = work }

        /// Starts the job's thread from the process's background thread
        /// (``later(_:)``), so that it is born at background priority. One
        /// started by the caller would run at the caller's priority until
        /// its first instructions lowered it, and the scheduler lets a thread
        /// keep a CPU it took that way until its next tick: traced, a reader
        /// lost its CPU for 4 ms to each background install's new thread.
        ///
        /// The closure handed over holds neither the job nor its work: that
        /// thread releases it only after the signal, when ``run(_:)`` may
        /// already be done, and `withoutActuallyEscaping` traps if its
        /// closure is still held then. The caller keeps the job alive while
        /// it waits.
        func startFromBackgroundThread() -> Bool {
            let done = DispatchSemaphore(value: 0)
            let outcome = Started()
            let job = Unmanaged.passUnretained(self)
            BackgroundWork.later {
                outcome.value = job._withUnsafeGuaranteedRef { $0.start() }
                done.signal()
            }
            done.wait()
            return outcome.value
        }

        /// Whether the thread started, set before the semaphore is signalled
        /// and read after it is waited for.
        private final class Started: @unchecked Sendable { var value = false }

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
