/// One metadata item of a movie or track, as ``MetadataTags`` reads it from `udta`.
public struct MetadataTag: Sendable, Hashable, CustomStringConvertible {
    /// The key: the item's box type for iTunes items and QuickTime `udta` text entries (`©nam`,
    /// `trkn`, `covr`), `----:MEAN:NAME` for freeform items
    /// (`----:com.apple.iTunes:iTunSMPB`), the key string for QuickTime `mdta` items
    /// (`com.apple.quicktime.make`), the box type for 3GPP asset boxes (`titl`).
    public var key: String
    /// The value as text: strings as they are, integers in decimal, `trkn`/`disk` as `N/TOTAL`,
    /// binary data (cover art) as a short description of its type and size.
    public var value: String
    /// For a picture (`covr`: iTunes data types 13 JPEG, 14 PNG): its encoded bytes.
    public var picture: ITunesMetadata.Artwork?

    /// A tag.
    public init(key: String, value: String, picture: ITunesMetadata.Artwork? = nil) {
        self.key = key
        self.value = value
        self.picture = picture
    }

    /// `key=value`.
    public var description: String { "\(key)=\(value)" }
}
