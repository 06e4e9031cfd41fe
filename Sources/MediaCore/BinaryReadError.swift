/// A read that asked for more than the data holds.
///
/// Every reader in MediaCore throws this one error, so that a parser can name the structure it
/// was reading and pass the byte offset on to its caller. The offset is absolute: readers are
/// created with the position of their first byte in the file or stream they came from.
public struct BinaryReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The unit in which ``needed`` and ``available`` are counted.
    public enum Unit: String, Sendable, Hashable {
        /// Counted in bytes (a ``ByteReader``'s reads, a short file read).
        case bytes
        /// Counted in bits (a ``BitReader``'s reads).
        case bits
    }

    /// Absolute byte offset at which the read started.
    public var offset: Int64
    /// How many units the read wanted.
    public var needed: Int
    /// How many units were left.
    public var available: Int
    /// Bytes for a ``ByteReader``, bits for a ``BitReader``.
    public var unit: Unit

    /// Creates the error for a read of `needed` units at `offset` with only `available` left.
    public init(offset: Int64, needed: Int, available: Int, unit: Unit) {
        self.offset = offset
        self.needed = needed
        self.available = available
        self.unit = unit
    }

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        "needed \(needed) \(unit.rawValue) at byte \(offset) but only \(available) remain"
    }
}
