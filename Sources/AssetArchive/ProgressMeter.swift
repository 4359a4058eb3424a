/// Turns a count of work done (bytes, members) into calls of a progress
/// closure at a bounded rate: at the start with 0, then each time the count
/// has grown by at least 1/256 of the total, and once at the end with the
/// total. A closure is called at most 258 times, however small the pieces of
/// work, and never with a count lower than the one before.
///
/// Shared by the modules of this package (the writer here, the store's
/// install); not public API.
package struct ProgressMeter {
    /// The count the work ends at.
    package let total: UInt64
    private let report: (_ done: UInt64, _ total: UInt64) -> Void
    private let step: UInt64
    /// The count last reported.
    private var reported: UInt64 = 0
    /// The count ``advance(by:)`` has reached.
    private var done: UInt64 = 0

    /// A meter for `total` units of work, reporting the start to `report` at once.
    package init(total: UInt64, report: @escaping (_ done: UInt64, _ total: UInt64) -> Void) {
        self.total = total
        self.report = report
        step = max(total / 256 + (total % 256 == 0 ? 0 : 1), 1)
        report(0, total)
    }

    /// Counts `count` more units done.
    package mutating func advance(by count: UInt64) {
        done += count
        reach(done)
    }

    /// Records that `done` units are done; reports it when it is at least a
    /// step beyond the last report. A lower count than before (work started
    /// over) is not reported, so reports never go back.
    package mutating func reach(_ done: UInt64) {
        assert(done <= total, "progress beyond its total: \(done) of \(total)")
        guard done >= reported + step else { return }
        reported = done
        report(done, total)
    }

    /// Reports the total, unless that was the last report.
    package mutating func finish() {
        guard reported != total else { return }
        reported = total
        report(total, total)
    }
}
