import Foundation
import Testing
import AssetSystem
import TestSupport

@Suite struct BackgroundWorkTests {
    struct Refused: Error, Equatable { let why: String }

    /// The body runs on a thread of its own at nice 19 (`SCHED_BATCH`),
    /// returns its value to the caller,
    /// and the caller's own priority does not change.
    @Test func theBodyRunsOnAThreadOfItsOwnAtBackgroundPriority() throws {
        let caller = BackgroundWork.threadID
        let before = BackgroundWork.currentPriority
        #expect(!BackgroundWork.isCurrent)
        let (thread, priority, inside) = BackgroundWork.run { (BackgroundWork.threadID, BackgroundWork.currentPriority, BackgroundWork.isCurrent) }
        #expect(thread != caller)
        #expect(inside)
        #expect(priority.policy == BackgroundWork.batchPolicy && priority.nice == 19, "\(priority)")
        #expect(BackgroundWork.currentPriority == before)
        #expect(!BackgroundWork.isCurrent)
    }

    @Test func theBodysErrorReachesTheCallerTyped() {
        #expect(throws: Refused(why: "no")) {
            try BackgroundWork.run { () throws(Refused) -> Int in throw Refused(why: "no") }
        }
        let typed: Result<Int, Refused> = Result { () throws(Refused) -> Int in
            try BackgroundWork.run { () throws(Refused) -> Int in throw Refused(why: "typed") }
        }
        #expect(typed == .failure(Refused(why: "typed")))
    }

    /// Work started from background work stays on its thread, and threads
    /// it starts inherit its priority — why code that may run there hands
    /// nothing to Dispatch.
    @Test func nestedWorkStaysOnTheThreadAndNewThreadsInheritIt() {
        let (outer, nested, child) = BackgroundWork.run { () -> (Int32, Int32, Bool) in
            let outer = BackgroundWork.threadID
            let nested = BackgroundWork.run { BackgroundWork.threadID }
            // The semaphore orders the child's write before the read.
            final class Seen: @unchecked Sendable { var background = false }
            let done = DispatchSemaphore(value: 0)
            let seen = Seen()
            let thread = Thread {
                seen.background = BackgroundWork.isCurrent
                done.signal()
            }
            thread.start()
            done.wait()
            return (outer, nested, seen.background)
        }
        #expect(outer == nested)
        #expect(child)
    }

    /// `later` returns before its work runs; the work runs in order on one
    /// thread that is not the caller's, at nice 19 (`SCHED_BATCH`), the
    /// same thread every time; from a thread at background priority it
    /// runs in place.
    @Test func laterRunsInOrderOnOneBackgroundThreadWithoutTheCallerWaiting() {
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var runs: [(order: Int, thread: Int32, policy: Int32, nice: Int32)] = []
        }
        let seen = Seen()
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let caller = BackgroundWork.threadID
        for order in 0 ..< 3 {
            BackgroundWork.later {
                if order == 0 { _ = gate.wait(timeout: .now() + 10) }
                let p = BackgroundWork.currentPriority
                seen.lock.withLock { seen.runs.append((order, BackgroundWork.threadID, p.policy, p.nice)) }
                if order == 2 { done.signal() }
            }
        }
        // The first job waits for the gate, which only this thread opens
        // (for 10 s at most: work run in place would wait that long, then fail).
        #expect(seen.lock.withLock { seen.runs.isEmpty })
        gate.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let runs = seen.lock.withLock { seen.runs }
        #expect(runs.map(\.order) == [0, 1, 2])
        #expect(Set(runs.map(\.thread)).count == 1 && runs[0].thread != caller)
        #expect(runs.allSatisfy { $0.policy == BackgroundWork.batchPolicy && $0.nice == 19 }, "\(runs)")
        let inPlace = BackgroundWork.run { () -> Bool in
            let here = BackgroundWork.threadID
            final class Ran: @unchecked Sendable { var on: Int32 = 0 }
            let ran = Ran()
            BackgroundWork.later { ran.on = BackgroundWork.threadID }
            return ran.on == here
        }
        #expect(inPlace)
    }

    /// Many runs in a row: the thread that starts each run's thread
    /// (``BackgroundWork/later(_:)``) must not hold the body after the run
    /// returns — `withoutActuallyEscaping` traps when it does (it did, now
    /// and then, in a background install).
    @Test func runsInARowLeaveNoReferenceToTheirBody() {
        var sum = 0
        for i in 0 ..< 500 {
            sum += BackgroundWork.run { i }
        }
        #expect(sum == 499 * 500 / 2)
    }

    /// A thread at background priority gives way once it has run for
    /// `wayInterval` since it last did, and never sooner; a thread of
    /// normal priority never gives way, however long it runs.
    @Test func onlyBackgroundThreadsGiveWayAndNoSoonerThanTheInterval() {
        let interval = BackgroundWork.wayInterval
        @Sendable func now() -> UInt64 {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        }
        // Three times the interval at normal priority (this test's thread).
        #expect(!BackgroundWork.isCurrent)
        let normalStart = now()
        var normalWays = 0
        while now() - normalStart < 3 * interval { if BackgroundWork.giveWay() { normalWays += 1 } }
        #expect(normalWays == 0)
        // At background priority: four chances given within 10 s however
        // busy the machine is, each at least an interval after the one
        // before. A chance is given inside the call that returns true, so
        // from the start of one such call to the end of the next is at least
        // the interval.
        let calls = BackgroundWork.run { () -> [(start: UInt64, end: UInt64)] in
            var calls: [(start: UInt64, end: UInt64)] = []
            let deadline = now() + 10_000_000_000
            while calls.count < 4 && now() < deadline {
                let start = now()
                if BackgroundWork.giveWay() { calls.append((start, now())) }
            }
            return calls
        }
        #expect(calls.count == 4)
        let gaps = zip(calls, calls.dropFirst()).map { $1.end - $0.start }
        #expect(gaps.allSatisfy { $0 >= interval }, "\(gaps)")
    }

    /// A large mapping marked for the background, dropped on a background
    /// thread, is unmapped there at once instead of on a Dispatch worker.
    @Test func aBackgroundThreadUnmapsInPlace() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("large.bin", [UInt8](repeating: 7, count: MappedRegion.backgroundThreshold))
        let stillMapped = try BackgroundWork.run { () throws -> Bool in
            do {
                var region = try MappedRegion(mapping: try FileDescriptor.open(path), count: MappedRegion.backgroundThreshold)
                region.unmapsInBackground()
                #expect(region.bytes.last == 7)
            }
            return try MappedRegionTests.isMapped(path)
        }
        #expect(!stillMapped)
    }
}
