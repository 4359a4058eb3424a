public import Foundation
import AssetDelivery

/// Publishes packs into a directory that any static HTTP server, CDN or
/// object store can host, as `assetpack publish` does, and checks such a
/// directory, as `assetpack verify-published` does. See docs/publishing.md.
public enum AssetPackPublisher {
    /// How to publish.
    public struct Options: Sendable {
        /// Signs the catalog (`catalog.json.sig`); required when the
        /// directory's catalog is signed, and must be the key that signed it.
        public var signingKey: AssetPackSigningKey?
        /// Gives the packs of this publish absolute URLs under this
        /// `http(s)://` URL instead of relative ones.
        public var baseURL: String?
        /// Removes pack files (`<id>-<12 hex>.zip`) the new catalog no longer names.
        public var prune: Bool
        /// When clients stop accepting the catalog; `nil`: never.
        public var expires: Date?
        /// How long to wait for another publisher to finish, in seconds.
        public var lockTimeout: Double
        /// The catalog's channel, which clients check against the one they
        /// ask for (``AssetPackManager/CatalogSource/channel``). `nil`: the
        /// directory's catalog's, or `default` for a new one. A channel
        /// other than the directory's catalog's is refused (`.channelChanged`).
        public var channel: String?

        public init(signingKey: AssetPackSigningKey? = nil, baseURL: String? = nil, prune: Bool = false,
                    expires: Date? = nil, lockTimeout: Double = 60, channel: String? = nil) {
            self.signingKey = signingKey
            self.baseURL = baseURL
            self.prune = prune
            self.expires = expires
            self.lockTimeout = lockTimeout
            self.channel = channel
        }
    }

    /// What a publish did to one pack or file.
    public struct Change: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// The pack is new to the catalog, or in a new version.
            case published
            /// The catalog already had the pack in this version and content.
            case unchanged
            /// An old pack file was removed (`prune`).
            case pruned
        }

        public let kind: Kind
        /// The pack's ID.
        public let pack: String
        /// Its version in the catalog (`nil` for a pruned file).
        public let version: UInt64?
        /// The file's name in the directory.
        public let file: String
    }

    /// The catalog written and what changed.
    public struct Report: Sendable {
        public let catalog: AssetPackCatalog
        public let changes: [Change]
    }

    /// Publishes the pack files at `paths` into `directory` (made if
    /// missing): each checked as ``AssetPackFile/inspect(at:limits:progress:)``
    /// checks it, copied as `<id>-<first 12 hex of its SHA-256>.zip`, the
    /// catalog rewritten with the next sequence number, signed when a key is
    /// given. Packs of the catalog not among `paths` stay.
    ///
    /// A pack's version is the `version` its manifest recorded; without one,
    /// the catalog's when the bytes are the same, else the catalog's plus one
    /// (1 for a new pack).
    ///
    /// - Throws: the pack's own error (`.badArchive`, `.limitExceeded`, …,
    ///   naming the file); `.publishRefused` (`.duplicatePackInPublish`,
    ///   `.versionBackwards`, `.versionReused`, `.signedByOtherKey`,
    ///   `.signatureRequired`, `.badPublishArgument`, `.packChanged`,
    ///   `.channelChanged`);
    ///   `.invalidCatalog`, `.unsupportedCatalogFormat` or
    ///   `.catalogSignatureInvalid` for the directory's own files;
    ///   `.lockTimeout`; `.system`.
    public static func publish(packsAt paths: [String], to directory: String, options: Options = Options(),
                               now: Date = Date()) throws(AssetPackError) -> Report {
        let engineOptions = Publisher.Options(signingKey: options.signingKey?.key, baseURL: options.baseURL, prune: options.prune,
                                              expires: options.expires.map(CatalogTime.init), now: CatalogTime(now),
                                              lockTimeout: options.lockTimeout, channel: options.channel)
        let report = try delivery { () throws(DeliveryError) in try Publisher.publish(paths, to: directory, options: engineOptions) }
        return Report(catalog: AssetPackCatalog(report.catalog), changes: report.changes.map {
            let kind: Change.Kind
            switch $0.kind {
            case .published: kind = .published
            case .unchanged: kind = .unchanged
            case .pruned: kind = .pruned
            }
            return Change(kind: kind, pack: $0.pack, version: $0.version, file: $0.file)
        })
    }

    /// One problem `verifyPublished` found.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// Whether it fails the directory.
        public let isError: Bool
        /// The file (relative to the directory) or URL concerned.
        public let file: String
        /// The pack concerned, when one is.
        public let pack: String?
        /// What is wrong.
        public let message: String

        /// `error: <file>: pack '<id>': <message>` (or `warning: …`).
        public var description: String {
            (isError ? "error: " : "warning: ") + "\(file): " + (pack.map { "pack '\($0)': " } ?? "") + message
        }
    }

    /// Checks every file of a published directory against its catalog: each
    /// entry's file exists (for relative URLs), has the catalog's size and
    /// SHA-256, checks clean, and is the entry's pack; the signature
    /// verifies by `publicKey` when one is given (and must exist then).
    /// Stray files and entries at absolute URLs are warnings.
    ///
    /// - Returns: every finding; the directory is good when none is an error.
    /// - Throws: `.system` only when the directory cannot be opened.
    public static func verifyPublished(at directory: String, publicKey: AssetPackPublicKey?) throws(AssetPackError) -> [Finding] {
        let report = try delivery { () throws(DeliveryError) in try PublishedDirectoryCheck.check(directory, key: publicKey?.key) }
        return report.findings.map { Finding(isError: $0.severity == .error, file: $0.file, pack: $0.pack, message: $0.message) }
    }
}
