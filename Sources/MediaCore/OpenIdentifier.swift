/// An identifier that any module can add values to: a name, with the values a module defines
/// as static members of the type (`AudioCodecID.aac`, `VideoCodec.h264`), the way Symphonia's
/// codec types are constants anyone can mint. Two values are equal when their names are, so a
/// value made again from its name is the same identifier.
///
/// Unlike an `enum`, nothing can switch over every value: code that handles some values says
/// what it does with the rest (`default:`), and a new value touches no switch.
public protocol OpenIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The name that identifies the value.
    var name: String { get }
    /// The value named `name`.
    init(_ name: String)
}

extension OpenIdentifier {
    /// The name.
    public var description: String { name }

    /// A value KeyFrameKit has no name for, by a container's code for it (an MP4 sample entry,
    /// a codec tag), named as the code.
    public static func other(_ code: FourCharacterCode) -> Self { Self(code.description) }
}
