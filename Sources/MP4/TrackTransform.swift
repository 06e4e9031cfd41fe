public import MediaCore

/// The transformation `matrix` of a track header (ISO/IEC 14496-12, 8.3.2 TrackHeaderBox;
/// 6.2.2 for its meaning): nine values `a, b, u, c, d, v, x, y, w` in file order, `a b c d x y`
/// in 16.16 fixed point and `u v w` in 2.30. A point `(p, q)` of the decoded picture is shown at
/// `(a·p + c·q + x, b·p + d·q + y)` (`y` axis pointing down), so `(a, b)` is where the
/// picture's x axis goes and `(c, d)` where its y axis goes.
///
/// ``rotation`` is the angle ffprobe (as the negative of its "Display Matrix" `rotation`) and
/// mediainfo (`Rotation`) report, clockwise: a portrait iPhone video (`0 1 -1 0`) is
/// `rotate 90`; FFmpeg 5.1's `-metadata:s:v rotate=90` writes `0 -1 1 0`, which ffprobe reports
/// as rotation `90` (counter-clockwise) and this type as `rotate 270`.
public struct TrackTransform: Sendable, Hashable, CustomStringConvertible {
    /// The nine values `a, b, u, c, d, v, x, y, w`, in file order.
    public private(set) var matrix: [Int32]

    /// 1.0 in 16.16 fixed point.
    static let one16: Int32 = 0x1_0000
    /// 1.0 in 2.30 fixed point.
    static let one30: Int32 = 0x4000_0000

    /// The identity matrix `{0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000}`.
    public static let identity = TrackTransform(a: one16, b: 0, u: 0, c: 0, d: one16, v: 0, x: 0, y: 0, w: one30)

    /// A matrix from its nine values.
    public init(a: Int32, b: Int32, u: Int32, c: Int32, d: Int32, v: Int32, x: Int32, y: Int32, w: Int32) {
        matrix = [a, b, u, c, d, v, x, y, w]
    }

    /// A matrix from the nine values in file order; `nil` unless there are exactly nine.
    public init?(matrix: [Int32]) {
        guard matrix.count == 9 else { return nil }
        self.matrix = matrix
    }

    /// Reads the 36-byte `matrix` field at the reader's position (of `tkhd` or `mvhd` at `path`).
    public init(from reader: inout ByteReader, path: BoxPath) throws(MP4Error) {
        var values: [Int32] = []
        values.reserveCapacity(9)
        for _ in 0..<9 {
            values.append(Int32(bitPattern: try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }))
        }
        matrix = values
    }

    var a: Int64 { Int64(matrix[0]) }
    var b: Int64 { Int64(matrix[1]) }
    var c: Int64 { Int64(matrix[3]) }
    var d: Int64 { Int64(matrix[4]) }

    /// Whether the matrix is exactly ``identity``.
    public var isIdentity: Bool { self == .identity }

    /// Whether the picture is shown mirrored: the determinant `a·d − b·c` is negative.
    public var isMirrored: Bool { a * d - b * c < 0 }

    /// The clockwise rotation in degrees, 0, 90, 180 or 270, when the matrix only rotates by a
    /// multiple of 90° (with any uniform scale and translation, possibly mirrored); `nil` for
    /// other matrices. It is the direction of the picture's x axis, `atan2(b, a)`, as ffprobe
    /// and mediainfo compute it. A mirrored matrix is the picture turned upside down
    /// (`q → −q`) and then rotated by this angle.
    public var rotation: Int? {
        guard matrix[2] == 0, matrix[5] == 0 else { return nil }
        if b == 0, c == 0, a != 0, abs(a) == abs(d) {
            return a > 0 ? 0 : 180
        }
        if a == 0, d == 0, b != 0, abs(b) == abs(c) {
            return b > 0 ? 90 : 270
        }
        return nil
    }

    /// The `rotation` of ffprobe's "Display Matrix" side data (FFmpeg's
    /// `av_display_rotation_get`): the counter-clockwise angle of the picture's x axis in
    /// degrees, in −180...180, for any matrix; `nil` when a column of the 2×2 part is zero.
    /// ffprobe prints it truncated to an integer.
    public var displayMatrixRotation: Double? {
        let scale0 = (Double(a) / 65536).magnitude.hypotenuse(with: Double(c) / 65536)
        let scale1 = (Double(b) / 65536).magnitude.hypotenuse(with: Double(d) / 65536)
        guard scale0 > 0, scale1 > 0 else { return nil }
        let radians = Self.atan2(Double(b) / 65536 / scale1, Double(a) / 65536 / scale0)
        return -radians * 180 / Double.pi
    }

    /// The size at which a `width` × `height` picture is shown: the bounding box of the
    /// transformed picture (`|a|·w + |c|·h` by `|b|·w + |d|·h`), rounded; width and height
    /// swap for a rotation of 90° or 270°. Results are clamped to `0...Int32.max`.
    public func displaySize(width: Int, height: Int) -> (width: Int, height: Int) {
        let w = Double(max(width, 0))
        let h = Double(max(height, 0))
        func clamp(_ value: Double) -> Int {
            guard value.isFinite else { return 0 }
            return Int(min(max(value.rounded(), 0), Double(Int32.max)))
        }
        let shownWidth = (Double(abs(a)) * w + Double(abs(c)) * h) / 65536
        let shownHeight = (Double(abs(b)) * w + Double(abs(d)) * h) / 65536
        return (clamp(shownWidth), clamp(shownHeight))
    }

    /// This track matrix followed by the movie's (`mvhd`) matrix, computed as FFmpeg's mov
    /// demuxer does (fixed-point products, each shifted by the row's precision) before it
    /// reports the display matrix.
    public func concatenating(movie: TrackTransform) -> TrackTransform {
        let shifts: [Int64] = [16, 16, 30]
        var result = [Int32](repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                var sum: Int64 = 0
                for inner in 0..<3 {
                    sum &+= (Int64(matrix[row * 3 + inner]) * Int64(movie.matrix[inner * 3 + column])) >> shifts[inner]
                }
                result[row * 3 + column] = Int32(truncatingIfNeeded: sum)
            }
        }
        return TrackTransform(matrix: result) ?? .identity
    }

    /// `identity`, `rotate 90`, `rotate 90, mirrored`, or the nine values of other matrices.
    public var description: String {
        if isIdentity { return "identity" }
        if let rotation { return "rotate \(rotation)" + (isMirrored ? ", mirrored" : "") }
        return "matrix [" + matrix.map(String.init).joined(separator: ", ") + "]"
    }

    /// `atan2` without Foundation: the angle of `(x, y)` in −π...π.
    static func atan2(_ y: Double, _ x: Double) -> Double {
        // The diagonals exactly, as the C library gives them (FFmpeg's 45° matrices).
        if y.magnitude == x.magnitude, x != 0 {
            let quarter = Double.pi / 4
            return x > 0 ? (y > 0 ? quarter : -quarter) : (y > 0 ? 3 * quarter : -3 * quarter)
        }
        if x > 0 { return atan(y / x) }
        if x < 0 { return y >= 0 ? atan(y / x) + .pi : atan(y / x) - .pi }
        if y > 0 { return .pi / 2 }
        if y < 0 { return -.pi / 2 }
        return 0
    }

    /// Arc tangent by argument reduction and a Taylor series (accurate to about 1e-15).
    static func atan(_ value: Double) -> Double {
        if value < 0 { return -atan(-value) }
        if value > 1 { return .pi / 2 - atan(1 / value) }
        // atan(x) = 2·atan(x / (1 + √(1 + x²))) brings x below tan(π/16) after two steps.
        var x = value
        var factor = 1.0
        for _ in 0..<2 {
            x = x / (1 + (1 + x * x).squareRoot())
            factor *= 2
        }
        var term = x
        var sum = 0.0
        var n = 1.0
        let square = x * x
        while term.magnitude > 1e-18 * max(sum.magnitude, 1e-300) && n < 200 {
            sum += term / n
            term *= -square
            n += 2
        }
        return factor * sum
    }
}

extension Double {
    /// `√(self² + other²)`.
    fileprivate func hypotenuse(with other: Double) -> Double { (self * self + other * other).squareRoot() }
}
