/// A program's say over automatic downloads, as Background Assets'
/// `StoreDownloaderExtension` has: set one in
/// ``AssetPackManager/Options/downloaderExtension`` and it is asked before
/// every download a policy starts — the essential and prefetch packs of an
/// installation event (`assetpack sync`,
/// ``AssetPackManager/ensureAvailability(of:forInstallationEvent:progress:onDeferral:)``)
/// and the updates ``AssetPackManager/checkForUpdates()`` starts. A pack it
/// declines is skipped and reported so.
///
/// It is not asked when the program itself asks for a pack
/// (``AssetPackManager/ensureLocalAvailability(of:progress:)``, `assetpack
/// fetch`): the program has decided already.
///
/// ```swift
/// struct OnlyLevels: AssetPackDownloaderExtension {
///     func shouldDownload(_ assetPack: AssetPack) -> Bool { assetPack.id.hasPrefix("Level") }
/// }
/// let manager = try AssetPackManager(options: .init(catalog: source, downloaderExtension: OnlyLevels()))
/// ```
public protocol AssetPackDownloaderExtension: Sendable {
    /// Whether `assetPack` (as the catalog lists it, with its
    /// ``AssetPack/status``) should be downloaded now. Called on the
    /// downloading thread; it should answer quickly.
    func shouldDownload(_ assetPack: AssetPack) -> Bool
}
