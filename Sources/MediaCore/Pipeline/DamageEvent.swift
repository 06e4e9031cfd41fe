/// Something wrong in an input that a reader stepped over instead of failing: bytes skipped to
/// find the next frame, a truncated frame or box, a broken track, a field that overstates its
/// contents.
///
/// Readers report damage as values, and jobs carry them up unchanged, so a caller can count,
/// filter or print them; ``description`` is the sentence for people.
public struct DamageEvent: Sendable, Hashable, CustomStringConvertible {
    /// What kind of damage.
    public enum Kind: Sendable, Hashable {
        /// Bytes that belong to no frame or box were skipped.
        case skippedBytes(count: Int64)
        /// A frame, box or chunk ends before the length it declares.
        case truncated(declared: Int64, available: Int64)
        /// A length field declares more than its contents need; the contents were read whole.
        case overstatedLength(declared: Int64, used: Int64)
        /// A checksum does not match its data.
        case checksumMismatch
        /// A structure that cannot be used was ignored (a second `moov`, a `moof` for an
        /// undeclared track, a stray box).
        case ignored
        /// A track cannot be read; the rest of the file can.
        case unreadableTrack(id: UInt32)
        /// Packets the container gives no bytes (`stsz` entries of 0 in an audio track): there
        /// is nothing to decode of them.
        case emptyPackets(count: Int64)
        /// A stream ends early with an error; what came before it was delivered.
        case endedEarly
        /// A header field disagrees with the data and was worked around (a WAV `data` size
        /// past the end of the file, a partial last frame, a repeated chunk).
        case inconsistentHeader
    }

    /// What kind of damage.
    public var kind: Kind
    /// The byte offset in the input where it is, when known.
    public var offset: Int64?
    /// The sentence for people, naming what is wrong and where.
    public var message: String

    /// A damage event.
    public init(_ kind: Kind, at offset: Int64? = nil, message: String) {
        self.kind = kind
        self.offset = offset
        self.message = message
    }

    /// ``message``.
    public var description: String { message }

    /// Whether media was lost here: bytes skipped, a truncated or unreadable part, packets with
    /// no bytes, a checksum that fails, a stream that ended early. A length that overstates whole contents, a
    /// structure ignored and a header worked around lose nothing: the input was read whole.
    /// (`keyframe` exits with status 3, "done with damage", when an event loses data.)
    public var losesData: Bool {
        switch kind {
        case .skippedBytes, .truncated, .checksumMismatch, .unreadableTrack, .emptyPackets, .endedEarly: true
        case .overstatedLength, .ignored, .inconsistentHeader: false
        }
    }
}
