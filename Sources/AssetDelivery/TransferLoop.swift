internal import CCurl
import Dispatch
import Foundation

/// The process's one libcurl multi handle, driven by one thread: every
/// ``HTTPClient`` request runs through it, so concurrent downloads share
/// its connection cache (a second download from a host reuses an idle
/// connection the first left) and its one event loop (`curl_multi_poll`),
/// instead of each blocking a thread in `curl_easy_perform`.
///
/// A caller hands over a configured easy handle and blocks until the
/// transfer is done; the handle's callbacks (body, headers, progress) run
/// on the loop's thread meanwhile. The caller's semaphore orders whatever
/// the callbacks wrote before the caller reads it.
final class TransferLoop: @unchecked Sendable {
    // `multi` is used on the loop's thread only, except `curl_multi_wakeup`,
    // which libcurl allows from any thread; `state` is behind `lock`.
    static let shared = TransferLoop()

    private let multi: UnsafeMutableRawPointer?
    private let lock = NSLock()
    private var state = State()

    private struct State {
        /// Handles waiting to be added, each with its job.
        var incoming: [(UnsafeMutableRawPointer, Job)] = []
        var running: [UnsafeMutableRawPointer: Job] = [:]
    }

    /// One transfer's end, as its caller waits for it.
    final class Job: @unchecked Sendable {
        // `result` is written on the loop's thread before `done` is signalled.
        let done = DispatchSemaphore(value: 0)
        var result = CURLE_OK
    }

    private init() {
        multi = curl_multi_init()
        guard multi != nil else { return }
        let thread = Thread { [unowned self] in run() }
        thread.name = "assetpacks.transfers"
        thread.start()
    }

    /// Runs the transfer `handle` is configured for, and returns its result
    /// (`curl_easy_perform`'s, in effect), blocking until it is done.
    func perform(_ handle: UnsafeMutableRawPointer) -> CURLcode {
        guard let multi else { return curl_easy_perform(handle) }
        let job = Job()
        lock.withLock { state.incoming.append((handle, job)) }
        _ = curl_multi_wakeup(multi)
        job.done.wait()
        return job.result
    }

    private func run() {
        guard let multi else { return }
        while true {
            let incoming = lock.withLock { () -> [(UnsafeMutableRawPointer, Job)] in
                let taken = state.incoming
                state.incoming.removeAll()
                for (handle, job) in taken { state.running[handle] = job }
                return taken
            }
            for (handle, job) in incoming where curl_multi_add_handle(multi, handle) != CURLM_OK {
                finish(handle, job, CURLE_FAILED_INIT)
            }
            var active: Int32 = 0
            _ = curl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                var handle: UnsafeMutableRawPointer?
                var result = CURLE_OK
                guard cas_curl_multi_done(message, &handle, &result) == 1, let handle else { continue }
                _ = curl_multi_remove_handle(multi, handle)
                if let job = lock.withLock({ state.running[handle] }) { finish(handle, job, result) }
            }
            var ready: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
    }

    private func finish(_ handle: UnsafeMutableRawPointer, _ job: Job, _ result: CURLcode) {
        lock.withLock { _ = state.running.removeValue(forKey: handle) }
        job.result = result
        job.done.signal()
    }
}
