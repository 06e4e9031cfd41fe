/// One named value of an AMF0 object or ECMA array (AMF0 spec 2.5 `object-property`: a UTF-8
/// name of at most 65,535 bytes, then a value).
public struct AMF0Property: Sendable, Hashable {
    /// The property's name.
    public var key: String
    /// Its value.
    public var value: AMF0Value

    /// The property `key` with `value`.
    public init(_ key: String, _ value: AMF0Value) {
        self.key = key
        self.value = value
    }
}
