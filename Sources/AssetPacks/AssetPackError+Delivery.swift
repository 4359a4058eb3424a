import AssetDelivery

// How catalog, key, trust and publishing errors become the public one.
// Every switch is exhaustive, so a new case cannot reach a user without a code.

extension AssetPackError {
    /// The public form of a delivery error.
    init(delivery error: DeliveryError) {
        let message = error.description
        switch error {
        case .invalidCatalog(let path, let field, let problem, _):
            self.init(.invalidCatalog, reason: Reason(problem), path: path, field: field, message: message)
        case .unsupportedCatalogFormat(let path, _):
            self.init(.unsupportedCatalogFormat, path: path, message: message)
        case .catalogUnsigned(let path):
            self.init(.catalogUnsigned, path: path, message: message)
        case .catalogKeyMismatch(let path, _, _):
            self.init(.catalogKeyMismatch, path: path, message: message)
        case .catalogSignatureInvalid(let path, let problem):
            let reason: Reason
            switch problem {
            case .malformed: reason = .malformedSignature
            case .mismatch: reason = .signatureMismatch
            }
            self.init(.catalogSignatureInvalid, reason: reason, path: path, message: message)
        case .catalogRollback(let path, _, _, let problem):
            let reason: Reason
            switch problem {
            case .olderSequence: reason = .olderSequence
            case .sequenceReused: reason = .sequenceReused
            }
            self.init(.catalogRollback, reason: reason, path: path, message: message)
        case .catalogExpired(let path, _, _):
            self.init(.catalogExpired, path: path, message: message)
        case .catalogChannelMismatch(let path, _, let found):
            self.init(.catalogChannelMismatch, reason: found == nil ? .noChannel : .otherChannel, path: path, message: message)
        case .invalidKey(let path, let problem, _):
            let reason: Reason
            switch problem {
            case .malformedPrivateKey: reason = .malformedPrivateKey
            case .malformedPublicKey: reason = .malformedPublicKey
            }
            self.init(.invalidKey, reason: reason, path: path, message: message)
        case .invalidTrustState(let path, _):
            self.init(.invalidTrustState, path: path, message: message)
        case .publishRefused(let path, let pack, let problem, _):
            self.init(.publishRefused, reason: Reason(problem), pack: pack, path: path, message: message)
        case .downloadFailed(let url, let pack, let problem, _):
            let code: Code
            var reason = Reason.unspecified
            switch problem {
            case .notFound: code = .downloadNotFound
            case .refused: code = .downloadRefused
            case .sizeMismatch(let expected, let received):
                code = .downloadSizeMismatch
                reason = received > expected ? .moreBytesThanCatalog : .fewerBytesThanCatalog
            case .checksumMismatch: code = .downloadChecksumMismatch
            case .retriesExhausted: code = .downloadRetriesExhausted
            case .transport: code = .downloadFailed
            case .cancelled: code = .downloadCancelled
            case .timedOut(let deadline):
                code = .downloadTimedOut
                reason = Reason(deadline)
            case .noRoom(_, _, let room):
                code = .downloadTooLarge
                if case .fileSizeLimit = room { reason = .exceedsFileSizeLimit } else { reason = .exceedsFreeSpace }
            }
            self.init(code, reason: reason, pack: pack.isEmpty ? nil : pack, path: url.isEmpty ? nil : url, message: message)
        case .catalogUnavailable(let url, .timedOut(let deadline), _):
            self.init(.downloadTimedOut, reason: Reason(deadline), path: url, message: message)
        case .catalogUnavailable(let url, _, _):
            self.init(.catalogUnavailable, path: url, message: message)
        case .caFileRefused(let path, let problem):
            switch problem {
            case .notRegularFile: self.init(.invalidCAFile, reason: .caFileNotRegular, path: path, message: message)
            case .tooLarge: self.init(.invalidCAFile, reason: .caFileTooLarge, path: path, message: message)
            case .unreadable(let e): self.init(.invalidCAFile, path: path, systemError: e.rawValue, message: message)
            }
        case .badPieceMap(let url, let pack, let problem, _):
            self.init(.invalidPieceMap, reason: Reason(problem), pack: pack, path: url, message: message)
        case .store(let e):
            self.init(e)
        case .system(let e):
            self.init(e)
        }
    }
}

extension AssetPackError.Reason {
    init(_ problem: DeliveryError.CatalogProblem) {
        switch problem {
        case .notJSON: self = .catalogNotJSON
        case .missingField: self = .catalogMissingField
        case .wrongType: self = .catalogWrongType
        case .badSequence: self = .catalogBadSequence
        case .badSHA256: self = .catalogBadSHA256
        case .badSize: self = .catalogBadSize
        case .badVersion: self = .catalogBadVersion
        case .duplicatePackID: self = .catalogDuplicatePack
        case .invalidPackID: self = .catalogInvalidPackID
        case .badURL: self = .catalogBadURL
        case .badTimestamp: self = .catalogBadTimestamp
        case .badValue: self = .catalogBadValue
        case .badChannel: self = .catalogBadChannel
        }
    }

    init(_ problem: DeliveryError.PieceMapProblem) {
        switch problem {
        case .notJSON: self = .pieceMapNotJSON
        case .unsupportedFormat: self = .pieceMapUnsupportedFormat
        case .missingField: self = .pieceMapMissingField
        case .wrongType: self = .pieceMapWrongType
        case .badValue: self = .pieceMapBadValue
        case .packMismatch: self = .pieceMapPackMismatch
        case .versionMismatch: self = .pieceMapVersionMismatch
        case .sizeMismatch: self = .pieceMapSizeMismatch
        case .sha256Mismatch: self = .pieceMapSHA256Mismatch
        case .notSorted: self = .pieceMapNotSorted
        case .overlapping: self = .pieceMapOverlapping
        case .outsideFile: self = .pieceMapOutsideFile
        case .glueSizeMismatch: self = .pieceMapGlueSizeMismatch
        case .tooManyMembers: self = .pieceMapTooManyMembers
        case .tooLarge: self = .pieceMapTooLarge
        case .referenceMismatch: self = .pieceMapReferenceMismatch
        }
    }

    init(_ deadline: DeliveryError.Deadline) {
        switch deadline {
        case .minimumSpeed: self = .belowMinimumSpeed
        case .total: self = .totalDeadline
        }
    }

    init(_ problem: DeliveryError.PublishProblem) {
        switch problem {
        case .versionBackwards: self = .versionBackwards
        case .versionReused: self = .versionReused
        case .duplicatePackID: self = .duplicatePackInPublish
        case .signedByOtherKey: self = .signedByOtherKey
        case .signatureRequired: self = .signatureRequired
        case .packChanged: self = .packChanged
        case .badArgument: self = .badPublishArgument
        case .channelChanged: self = .channelChanged
        }
    }
}

/// Runs a delivery call and reports its error in public terms.
@inline(__always)
func delivery<T>(_ body: () throws(DeliveryError) -> T) throws(AssetPackError) -> T {
    do { return try body() } catch { throw AssetPackError(delivery: error) }
}
