import Foundation

/// The entries of a server's access log (as `read` parses it now) that
/// `matching` selects, once there are at least `count` of them — servers
/// log a request after its response is sent, so the client may see it
/// first — or what there is after 20 s.
func awaitEntries<Entry>(count: Int, _ read: () -> [Entry], where matching: (Entry) -> Bool) -> [Entry] {
    let deadline = Date().addingTimeInterval(20)
    var found = read().filter(matching)
    while found.count < count && Date() < deadline {
        usleep(5_000)
        found = read().filter(matching)
    }
    return found
}
