// Two threads increment one counter, guarded by Synchronization's Mutex
// (`repro mutex`) or by a pthread mutex (`repro pthread`). Every access to
// the counter is under the lock, so there is no race, and the program checks
// that no increment was lost. See README.md.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class Box: Sendable {
    let counter = Mutex<Int>(0)
}

/// The same counter behind a pthread mutex, which TSan intercepts.
final class PthreadBox: @unchecked Sendable {  // every access holds `lock`
    var lock = pthread_mutex_t()
    var counter = 0
    init() { pthread_mutex_init(&lock, nil) }
}

let usePthread = CommandLine.arguments.dropFirst().first == "pthread"
let box = Box()
let pbox = PthreadBox()
let iterations = 100_000
func work(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    for _ in 0..<iterations {
        if usePthread {
            pthread_mutex_lock(&pbox.lock)
            pbox.counter += 1
            pthread_mutex_unlock(&pbox.lock)
        } else {
            box.counter.withLock { $0 += 1 }
        }
    }
    return nil
}

var threads: [pthread_t] = []
for _ in 0..<2 {
    var t = pthread_t()
    precondition(pthread_create(&t, nil, { work($0) }, nil) == 0)
    threads.append(t)
}
for t in threads { pthread_join(t, nil) }
let total = usePthread ? pbox.counter : box.counter.withLock { $0 }
precondition(total == 2 * iterations, "lost updates: \(total)")
print("total \(total): no update lost")
